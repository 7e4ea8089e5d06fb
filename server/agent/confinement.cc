// Confinement of agents (confinement.h).
#include "server/agent/confinement.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/child_process.h"

namespace kseek::agent {

namespace fs = std::filesystem;

namespace {

constexpr absl::Duration kToolTimeout = absl::Seconds(60);

std::string FindTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

absl::Status RunTool(const std::vector<std::string>& argv) {
  const std::string path = FindTool(argv[0]);
  if (path.empty()) return absl::NotFoundError(absl::StrCat(argv[0], " is not installed"));
  ChildSpec spec;
  spec.path = path;
  spec.argv = argv;
  absl::StatusOr<FinishedChild> done = RunToEnd(spec, kToolTimeout);
  if (!done.ok()) return done.status();
  if (done->exit_code != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " ", argv.back(), " ", done->description,
                                            ": ", absl::StripAsciiWhitespace(done->output)));
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentUser> LookUp(const std::string& name) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwnam_r(name.c_str(), &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) {
    return absl::NotFoundError(absl::StrCat("no user ", name));
  }
  return AgentUser{name, pw.pw_uid, pw.pw_gid};
}

// How long KillAllProcessesOf keeps at it.
constexpr absl::Duration kKillAllLimit = absl::Seconds(2);

// Sends `sig` to every process of `uid` from a child that takes the uid:
// kill(-1) then reaches exactly the processes whose real or saved user id
// is `uid` (never itself), wherever they moved to.
void SignalEveryProcessOf(uid_t uid, int sig) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
    kill(-1, sig);
    _exit(0);
  }
  if (pid > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

// Whether a process that is not a zombie has `uid` as its real or saved
// user id (one that SignalEveryProcessOf reaches). kill(-1) cannot say: it
// succeeds whenever any other process exists.
bool AnyProcessOf(uid_t uid) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), absl::ascii_isdigit)) continue;
    std::ifstream status(it->path() / "status");
    bool gone = false, of_uid = false;
    for (std::string line; std::getline(status, line);) {
      if (absl::StartsWith(line, "State:")) {
        gone = absl::StrContains(line, "(zombie)") || absl::StrContains(line, "(dead)");
      } else if (absl::StartsWith(line, "Uid:")) {
        std::vector<std::string> ids = absl::StrSplit(line.substr(4), absl::ByAnyChar(" \t"),
                                                      absl::SkipEmpty());
        uid_t real = 0, saved = 0;
        of_uid = ids.size() >= 3 && absl::SimpleAtoi(ids[0], &real) &&
                 absl::SimpleAtoi(ids[2], &saved) && (real == uid || saved == uid);
        break;  // Uid: follows State:
      }
    }
    if (of_uid && !gone) return true;
  }
  return false;
}

}  // namespace

ConfinementSupport ProbeConfinement(const std::string& workspaces_dir,
                                    const std::string& kseek_dir) {
  if (geteuid() != 0) {
    return {false, absl::StrCat("kernelseekd runs as uid ", geteuid(),
                                ", not root: it cannot run agents as other users")};
  }
  for (const char* tool : {"useradd", "userdel"}) {
    if (FindTool(tool).empty()) return {false, absl::StrCat(tool, " is not installed")};
  }
  // An agent reaches its workspace by its absolute path, and runs kseek.
  const auto unreachable = [](const fs::path& below, const std::string& what) -> std::string {
    for (fs::path p = below; !p.empty(); p = p.parent_path()) {
      struct stat st;
      if (stat(p.c_str(), &st) != 0) break;
      if ((st.st_mode & S_IXOTH) == 0) {
        return absl::StrCat(p.string(), " is not searchable by other users (mode ",
                            absl::StrFormat("%04o", st.st_mode & 07777), "): agents could not ",
                            what);
      }
      if (p == p.root_path()) break;
    }
    return "";
  };
  std::string why = unreachable(fs::path(workspaces_dir).parent_path(), "reach their workspaces");
  if (why.empty() && !kseek_dir.empty()) why = unreachable(kseek_dir, "run kseek");
  if (!why.empty()) return {false, why};
  return {true, ""};
}

std::string AgentUserName(const std::string& session_id) {
  return absl::StrCat("ks-", absl::StripPrefix(session_id, "ss_"));
}

absl::StatusOr<AgentUser> EnsureAgentUser(const std::string& session_id) {
  const std::string name = AgentUserName(session_id);
  absl::StatusOr<AgentUser> user = LookUp(name);
  if (user.ok()) return user;
  absl::Status made = RunTool({"useradd", "--system", "--user-group", "--no-create-home",
                               "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                               "--comment", absl::StrCat("KernelSeek agent of ", session_id), name});
  if (!made.ok()) {
    return absl::Status(made.code(),
                        absl::StrCat("cannot create the agent's user: ", made.message()));
  }
  return LookUp(name);
}

absl::StatusOr<AgentUser> FindAgentUser(const std::string& session_id) {
  return LookUp(AgentUserName(session_id));
}

absl::Status RemoveAgentUser(const std::string& session_id) {
  absl::StatusOr<AgentUser> user = LookUp(AgentUserName(session_id));
  if (!user.ok()) return absl::OkStatus();
  if (user->uid != 0) KillAllProcessesOf(user->uid);
  return RunTool({"userdel", user->name});
}

void KillAllProcessesOf(uid_t uid) {
  if (uid == 0) return;
  const absl::Time give_up = absl::Now() + kKillAllLimit;
  while (true) {
    SignalEveryProcessOf(uid, SIGKILL);
    if (!AnyProcessOf(uid) || absl::Now() >= give_up) return;
    absl::SleepFor(absl::Milliseconds(10));  // killed ones are on their way out
  }
}

absl::Status ChownTree(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  std::error_code ec;
  if (lchown(path.c_str(), uid, gid) != 0 || chmod(path.c_str(), mode) != 0) {
    return absl::InternalError(absl::StrCat(path, ": cannot give it to uid ", uid, ": ",
                                            std::strerror(errno)));
  }
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (lchown(it->path().c_str(), uid, gid) != 0) {
      return absl::InternalError(absl::StrCat(it->path().string(), ": cannot give it to uid ",
                                              uid, ": ", std::strerror(errno)));
    }
  }
  if (ec) return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  return absl::OkStatus();
}

std::vector<std::pair<int, uint64_t>> AgentRlimits() {
  return {{RLIMIT_CORE, 0},
          {RLIMIT_NPROC, 1024},
          {RLIMIT_NOFILE, 4096},
          {RLIMIT_FSIZE, uint64_t{8} << 30}};
}

}  // namespace kseek::agent
