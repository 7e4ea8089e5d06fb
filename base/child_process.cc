// ChildProcess (child_process.h).
#include "base/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace kseek {

namespace {

// What failed in the child before exec, sent to the parent on a
// close-on-exec pipe: the step and its errno. Nothing arrives when exec
// succeeds.
struct StartFailure {
  int step = 0;
  int err = 0;
};

enum Step {
  kStepGroup = 1,
  kStepStdio,
  kStepFds,
  kStepChdir,
  kStepRlimit,
  kStepUnshare,
  kStepGroups,
  kStepGid,
  kStepUid,
  kStepBeforeExec,
  kStepExec,
};

const char* StepName(int step) {
  switch (step) {
    case kStepGroup: return "setsid/setpgid";
    case kStepStdio: return "redirecting stdin/stdout/stderr";
    case kStepFds: return "passing descriptors";
    case kStepChdir: return "chdir";
    case kStepRlimit: return "setrlimit";
    case kStepUnshare: return "unshare";
    case kStepGroups: return "setgroups";
    case kStepGid: return "setgid";
    case kStepUid: return "setuid";
    case kStepBeforeExec: return "the last set-up step";
    default: return "exec";
  }
}

[[noreturn]] void FailInChild(int report_fd, int step) {
  StartFailure f{step, errno};
  (void)!write(report_fd, &f, sizeof(f));
  _exit(127);
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Moves `fd` to a number above every number the child's fds will take, so
// that the dup2 calls that put descriptors in place never overwrite it.
int MoveHigh(int fd, int above) {
  if (fd < 0 || fd > above) return fd;
  return fcntl(fd, F_DUPFD_CLOEXEC, above + 1);
}

}  // namespace

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return absl::StrCat("was killed by signal ", sig, " (", name != nullptr ? name : "unknown",
                        ")");
  }
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return "ended";
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(const ChildSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("ChildSpec.argv is empty");
  const std::string& program = spec.path.empty() ? spec.argv[0] : spec.path;

  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (spec.env) {
    for (const std::string& e : *spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char* const* env = spec.env ? envp.data() : environ;

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, report[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &report[0],
                    &report[1]}) {
      CloseFd(fd);
    }
  };
  const auto fail = [&](const std::string& what) -> absl::Status {
    const int err = errno;
    close_all();
    return absl::InternalError(absl::StrCat(what, " for ", program, ": ", strerror(err)));
  };
  if (pipe2(report, O_CLOEXEC) != 0) return fail("pipe");
  if (spec.stdout_to == ChildOutput::kPipe && pipe2(out_pipe, O_CLOEXEC) != 0) return fail("pipe");
  const bool err_own_pipe =
      spec.stderr_to == ChildOutput::kPipe && !(spec.merge_stderr && spec.stdout_to == ChildOutput::kPipe);
  if (err_own_pipe && pipe2(err_pipe, O_CLOEXEC) != 0) return fail("pipe");

  int file_fd = -1;
  if (spec.stdout_to == ChildOutput::kFile || spec.stderr_to == ChildOutput::kFile) {
    // Appending: another process (the judge's OpenBroker) may add lines.
    file_fd = open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                   0600);
    if (file_fd < 0) {
      const int err = errno;
      close_all();
      return absl::InternalError(
          absl::StrCat("cannot create ", spec.output_file, ": ", strerror(err)));
    }
  }
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  // Child descriptor numbers the passed ones take; the sources are moved
  // above all of them first.
  int highest = 2;
  for (const auto& [from, to] : spec.pass_fds) highest = std::max({highest, to, from});
  std::vector<std::pair<int, int>> pass;
  for (const auto& [from, to] : spec.pass_fds) pass.emplace_back(from, to);

  auto target_of = [&](ChildOutput o, int pipe_write) {
    switch (o) {
      case ChildOutput::kPipe: return pipe_write;
      case ChildOutput::kFile: return file_fd;
      case ChildOutput::kNull: return null_fd;
      case ChildOutput::kInherit: return -1;
    }
    return -1;
  };
  const int child_out = target_of(spec.stdout_to, out_pipe[1]);
  const int child_err =
      spec.stderr_to == ChildOutput::kPipe && !err_own_pipe ? out_pipe[1]
                                                            : target_of(spec.stderr_to, err_pipe[1]);
  // Limits only lower: one above this process's hard limit is that limit.
  std::vector<std::pair<int, rlimit>> limits;
  for (const auto& [resource, value] : spec.rlimits) {
    rlimit now{};
    rlim_t v = static_cast<rlim_t>(value);
    if (getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY && v > now.rlim_max) {
      v = now.rlim_max;
    }
    limits.push_back({resource, rlimit{v, v}});
  }
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid == 0) {
    const int rep = MoveHigh(report[1], highest + 3);
    if (spec.new_session ? setsid() < 0 : setpgid(0, 0) != 0) FailInChild(rep, kStepGroup);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
      sigaction(sig, &dfl, nullptr);
    }
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    for (int sig : spec.ignore_signals) sigaction(sig, &ign, nullptr);

    // stdio, then the passed descriptors, each from a source moved out of
    // the way of every target number.
    const int in_src = MoveHigh(null_fd, highest + 3);
    const int out_src = MoveHigh(child_out, highest + 3);
    const int err_src = MoveHigh(child_err, highest + 3);
    for (auto& p : pass) p.first = MoveHigh(p.first, highest + 3);
    if (in_src >= 0 && dup2(in_src, STDIN_FILENO) < 0) FailInChild(rep, kStepStdio);
    if (out_src >= 0 && dup2(out_src, STDOUT_FILENO) < 0) FailInChild(rep, kStepStdio);
    if (err_src >= 0 && dup2(err_src, STDERR_FILENO) < 0) FailInChild(rep, kStepStdio);
    for (const auto& [from, to] : pass) {
      if (from == to) {
        if (fcntl(to, F_SETFD, 0) != 0) FailInChild(rep, kStepFds);
      } else if (dup2(from, to) < 0) {
        FailInChild(rep, kStepFds);
      }
    }
    // Close every descriptor that is not stdio, passed, or the report pipe.
    for (int fd = 3; fd <= highest + 2; ++fd) {
      bool keep = fd == rep;
      for (const auto& p : pass) keep |= fd == p.second;
      if (!keep) close(fd);
    }
    // The report pipe sits above highest + 3 (MoveHigh).
    if (syscall(SYS_close_range, static_cast<unsigned>(highest + 3),
                static_cast<unsigned>(rep - 1), 0u) != 0) {
      for (int fd = highest + 3; fd < rep; ++fd) close(fd);
    }
    if (syscall(SYS_close_range, static_cast<unsigned>(rep + 1), ~0u, 0u) != 0) {
      for (int fd = rep + 1; fd < 65536; ++fd) close(fd);
    }

    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) FailInChild(rep, kStepChdir);
    for (const auto& [resource, lim] : limits) {
      if (setrlimit(resource, &lim) != 0) FailInChild(rep, kStepRlimit);
    }
    if (spec.unshare_flags != 0 && unshare(spec.unshare_flags) != 0 && spec.unshare_required) {
      FailInChild(rep, kStepUnshare);
    }
    if (spec.gid) {
      if (setgroups(spec.groups.size(), spec.groups.data()) != 0) FailInChild(rep, kStepGroups);
      if (setresgid(*spec.gid, *spec.gid, *spec.gid) != 0) FailInChild(rep, kStepGid);
    }
    if (spec.uid && setresuid(*spec.uid, *spec.uid, *spec.uid) != 0) FailInChild(rep, kStepUid);
    // After the change of user, which clears the parent-death signal.
    if (spec.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
    }
    if (spec.before_exec) {
      const int err = spec.before_exec();
      if (err != 0) {
        errno = err;
        FailInChild(rep, kStepBeforeExec);
      }
    }
    execve(program.c_str(), argv.data(), env);
    FailInChild(rep, kStepExec);
  }
  const int fork_errno = errno;
  CloseFd(&report[1]);
  CloseFd(&out_pipe[1]);
  CloseFd(&err_pipe[1]);
  if (file_fd >= 0) close(file_fd);
  if (null_fd >= 0) close(null_fd);
  if (pid < 0) {
    errno = fork_errno;
    return fail("fork");
  }
  if (!spec.new_session) setpgid(pid, pid);  // also here: a kill never races the child's call

  StartFailure failure;
  ssize_t got;
  while ((got = read(report[0], &failure, sizeof(failure))) < 0 && errno == EINTR) {
  }
  CloseFd(&report[0]);
  if (got == static_cast<ssize_t>(sizeof(failure))) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close_all();
    if (failure.step == kStepExec) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot run ", program, ": ", strerror(failure.err)));
    }
    return absl::FailedPreconditionError(absl::StrCat("starting ", program, ": ",
                                                      StepName(failure.step), ": ",
                                                      strerror(failure.err)));
  }

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  child->out_.fd = out_pipe[0];
  child->err_.fd = err_pipe[0];
  for (int fd : {child->out_.fd, child->err_.fd}) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    Kill();
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(&out_.fd);
  CloseFd(&err_.fd);
  CloseFd(&pidfd_);
}

pid_t ChildProcess::Release() {
  const pid_t pid = pid_;
  reaped_ = true;  // nothing left to do for the destructor
  CloseFd(&out_.fd);
  CloseFd(&err_.fd);
  CloseFd(&pidfd_);
  return pid;
}

void ChildProcess::Signal(int sig) {
  if (reaped_ || pid_ <= 0) return;
  if (kill(-pid_, sig) != 0) kill(pid_, sig);
}

void ChildProcess::Kill() { Signal(SIGKILL); }

void ChildProcess::Stop(std::vector<std::pair<int, absl::Duration>> sequence) {
  if (!stop_.empty() || sequence.empty()) return;  // already stopping
  stop_ = std::move(sequence);
  stop_next_ = 0;
  AdvanceStop(absl::Now());
}

void ChildProcess::AdvanceStop(absl::Time now) {
  while (stop_next_ < stop_.size() && (stop_next_ == 0 || now >= stop_at_)) {
    Signal(stop_[stop_next_].first);
    stop_at_ = now + stop_[stop_next_].second;
    ++stop_next_;
  }
}

absl::Time ChildProcess::NextStopAt() const {
  return stop_next_ > 0 && stop_next_ < stop_.size() ? stop_at_ : absl::InfiniteFuture();
}

bool ChildProcess::Exited() {
  if (reaped_) return true;
  siginfo_t info;
  memset(&info, 0, sizeof(info));
  // WNOWAIT: the child stays a zombie, so its process group id cannot be
  // reused while what is left of the group is killed.
  if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_) {
    return false;
  }
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  exited_at_ = absl::Now();
  CloseFd(&pidfd_);
  return true;
}

void ChildProcess::Deliver(Stream* s, absl::string_view line) {
  delivered_ = true;
  if (s->sink) s->sink(line);
}

void ChildProcess::ReadAvailable(Stream* s) {
  char buf[65536];
  while (s->fd >= 0) {
    const ssize_t got = read(s->fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) return;
    if (got <= 0) {  // end of output, or an error that ends it
      Flush(s);
      CloseFd(&s->fd);
      return;
    }
    absl::string_view chunk(buf, static_cast<size_t>(got));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const absl::string_view piece = chunk.substr(0, nl);
      if (!s->dropping) {
        const size_t room = max_line_bytes_ - std::min(max_line_bytes_, s->partial.size());
        s->partial.append(piece.data(), std::min(room, piece.size()));
        if (piece.size() > room) {
          Deliver(s, s->partial);
          s->partial.clear();
          s->dropping = true;
        }
      }
      if (nl == absl::string_view::npos) break;
      if (!s->dropping) Deliver(s, s->partial);
      s->partial.clear();
      s->dropping = false;
      chunk.remove_prefix(nl + 1);
    }
  }
}

void ChildProcess::Flush(Stream* s) {
  if (!s->partial.empty() && !s->dropping) Deliver(s, s->partial);
  s->partial.clear();
  s->dropping = false;
}

PumpResult ChildProcess::Pump(absl::Time until, const std::vector<int>& wake_fds) {
  PumpResult r;
  while (true) {
    const absl::Time now = absl::Now();
    AdvanceStop(now);
    Exited();
    const bool closed = out_.fd < 0 && err_.fd < 0;
    if (reaped_ && (closed || now - exited_at_ >= drain_)) {
      r.exited = true;
      r.output_closed = closed;
      return r;
    }
    if (now >= until) {
      r.deadline = true;
      r.exited = reaped_;
      r.output_closed = closed;
      return r;
    }
    absl::Time wake_at = std::min(until, NextStopAt());
    if (reaped_) wake_at = std::min(wake_at, exited_at_ + drain_);
    // Without a pidfd the exit is polled for.
    if (!reaped_ && pidfd_ < 0) wake_at = std::min(wake_at, now + absl::Milliseconds(20));
    int timeout_ms = -1;
    if (wake_at != absl::InfiniteFuture()) {
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(wake_at - now, absl::Milliseconds(1))), 0,
          1 << 30));
    }
    std::vector<pollfd> fds;
    for (int fd : {out_.fd, err_.fd, reaped_ ? -1 : pidfd_}) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    const size_t first_wake = fds.size();
    for (int fd : wake_fds) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    if (fds.empty()) {
      // Nothing to watch but the clock (output closed, no pidfd).
      absl::SleepFor(std::min(wake_at - now, absl::Milliseconds(20)));
      continue;
    }
    const int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      // poll failed: end the child rather than leave it unattended.
      Kill();
      Exited();
    }
    delivered_ = false;
    ReadAvailable(&out_);
    ReadAvailable(&err_);
    r.lines = delivered_;
    for (size_t i = first_wake; n > 0 && i < fds.size(); ++i) {
      if (fds[i].revents != 0) r.woken = true;
    }
    if (r.woken || r.lines) {
      r.exited = Exited();
      r.output_closed = out_.fd < 0 && err_.fd < 0;
      return r;
    }
  }
}

void ChildProcess::Wait(absl::Time until) {
  while (!reaped_ || out_.fd >= 0 || err_.fd >= 0) {
    PumpResult r = Pump(until);
    if (r.exited) break;
    if (r.deadline) {
      Kill();
      until = absl::InfiniteFuture();
      drain_ = std::min(drain_, absl::Seconds(1));
    }
  }
  if (!reaped_) {
    Kill();
    while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  Flush(&out_);
  Flush(&err_);
}

std::string ChildProcess::ExitDescription() const {
  return reaped_ ? DescribeWaitStatus(wait_status_) : "is still running";
}

bool ChildProcess::ExitedNormally(int* code) const {
  if (!reaped_ || !WIFEXITED(wait_status_)) return false;
  if (code != nullptr) *code = WEXITSTATUS(wait_status_);
  return true;
}

int ChildProcess::TermSignal() const {
  return reaped_ && WIFSIGNALED(wait_status_) ? WTERMSIG(wait_status_) : 0;
}

absl::StatusOr<FinishedChild> RunToEnd(ChildSpec spec, absl::Duration timeout,
                                       size_t max_output) {
  spec.stdout_to = ChildOutput::kPipe;
  spec.stderr_to = ChildOutput::kPipe;
  spec.merge_stderr = true;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  if (!child.ok()) return child.status();
  FinishedChild result;
  (*child)->OnStdoutLine([&](absl::string_view line) {
    result.output.append(line.data(), line.size());
    result.output.push_back('\n');
    if (result.output.size() > 2 * max_output) {
      result.output.erase(0, result.output.size() - max_output);
    }
  });
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    PumpResult r = (*child)->Pump(deadline);
    if (r.exited) break;
    if (r.deadline) {
      result.timed_out = true;
      (*child)->Kill();
      (*child)->Wait();
      break;
    }
  }
  (*child)->Wait();
  if (result.output.size() > max_output) {
    result.output.erase(0, result.output.size() - max_output);
  }
  int code = 0;
  if ((*child)->ExitedNormally(&code)) result.exit_code = code;
  result.signal = (*child)->TermSignal();
  result.description = (*child)->ExitDescription();
  return result;
}

}  // namespace kseek
