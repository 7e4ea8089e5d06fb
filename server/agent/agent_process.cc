#include "agent/agent_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/text.h"
#include "process_spawn.h"

extern char** environ;

namespace kseek::agent {
namespace {

// After the agent exits, how long its output pipes may stay open (held by a
// process that left its process group) before the run stops reading them.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(2);
// Poll interval when pidfd_open is unavailable (kernels before 5.3).
constexpr absl::Duration kExitPollInterval = absl::Milliseconds(50);
constexpr int kStderrLinesInMessages = 5;

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// The merged environment: this process's, overridden by `additions`.
std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& additions) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) continue;
    env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& [name, value] : additions) env[name] = value;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(absl::StrCat(name, "=", value));
  return out;
}

std::string PathOf(const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    if (absl::StartsWith(entry, "PATH=")) return entry.substr(5);
  }
  return "/usr/local/bin:/usr/bin:/bin";
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The program to execute for argv[0], or an error event naming it.
absl::StatusOr<std::string> ResolveProgram(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) {
    if (IsExecutableFile(program)) return program;
    return absl::NotFoundError(absl::StrCat("agent program \"", program,
                                            "\" is not an executable file"));
  }
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", program);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "agent program \"", program, "\" was not found on PATH (", path,
      "); is it installed? scripts/setup.sh installs the claude and codex CLIs"));
}

std::string SignalName(int sig) {
  const char* name = strsignal(sig);
  return absl::StrCat(sig, name != nullptr ? absl::StrCat(" (", name, ")") : "");
}

std::string WithStderr(std::string message, const std::string& stderr_tail) {
  const std::string lines = LastLines(stderr_tail, kStderrLinesInMessages);
  if (!lines.empty()) absl::StrAppend(&message, "; stderr: ", lines);
  return message;
}

}  // namespace

std::unique_ptr<AgentProcess> AgentProcess::Start(const AgentInvocation& invocation,
                                                  std::unique_ptr<EventParser> parser,
                                                  const AgentLimits& limits,
                                                  AgentEventSink sink) {
  std::unique_ptr<AgentProcess> p(new AgentProcess(std::move(parser), limits, std::move(sink)));
  p->Spawn(invocation);
  p->thread_ = std::thread([raw = p.get()] { raw->Run(); });
  return p;
}

AgentProcess::AgentProcess(std::unique_ptr<EventParser> parser, const AgentLimits& limits,
                           AgentEventSink sink)
    : parser_(std::move(parser)), limits_(limits), sink_(std::move(sink)) {
  if (!sink_) sink_ = [](const AgentEvent&) {};
}

AgentProcess::~AgentProcess() {
  Interrupt("the agent process object was destroyed");
  Wait();
  CloseFd(&wake_fd_);  // only now: Interrupt() may write to it until the run is done
}

void AgentProcess::Spawn(const AgentInvocation& invocation) {
  started_at_ = absl::Now();
  const auto fail = [&](AgentErrorKind kind, std::string message) {
    spawn_error_ = AgentEvent::Error(kind, true, message);
  };
  if (invocation.argv.empty() || invocation.argv[0].empty()) {
    return fail(AgentErrorKind::kStart, "agent invocation: argv is empty");
  }
  const std::string& program = invocation.argv[0];
  program_ = program;
  struct stat st;
  if (stat(invocation.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(AgentErrorKind::kStart,
                absl::StrCat("agent \"", program, "\": working directory \"", invocation.cwd,
                             "\" is not a directory"));
  }
  const std::vector<std::string> env = MergedEnvironment(invocation.env);
  absl::StatusOr<std::string> resolved = ResolveProgram(program, PathOf(env));
  if (!resolved.ok()) {
    return fail(AgentErrorKind::kNotInstalled, std::string(resolved.status().message()));
  }

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return fail(AgentErrorKind::kStart, absl::StrCat("pipe for ", program, ": ", strerror(errno)));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return fail(AgentErrorKind::kStart, absl::StrCat("pipe for ", program, ": ", strerror(errno)));
  }

  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  SpawnOptions options;
  options.stdout_fd = out[1];
  options.stderr_fd = err[1];
  options.cwd = invocation.cwd;
  options.envp = envp.data();
  pid_t pid = -1;
  const int rc = SpawnInNewGroup(*resolved, invocation.argv, options, &pid);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    const bool cannot_exec = rc == ENOENT || rc == EACCES || rc == ENOEXEC || rc == ENOTDIR;
    return fail(cannot_exec ? AgentErrorKind::kNotInstalled : AgentErrorKind::kStart,
                absl::StrCat("agent program \"", program, "\" (", *resolved,
                             ") could not be started: ", strerror(rc)));
  }
  pid_ = pid;
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  fcntl(stdout_fd_, F_SETFL, fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void AgentProcess::Interrupt(const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (done_ || interrupt_reason_) return;
    interrupt_reason_ = reason;
  }
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }
}

AgentExit AgentProcess::Wait() {
  std::call_once(joined_, [this] { thread_.join(); });
  absl::MutexLock lock(&mu_);
  return exit_;
}

void AgentProcess::Run() {
  enum class Stop { kNone, kInterrupt, kTimeout, kFatal, kLingering };
  Stop stop = Stop::kNone;
  int stop_stage = 0;  // signals sent so far: 1 SIGINT, 2 SIGTERM, 3 SIGKILL
  absl::Time next_escalation = absl::InfiniteFuture();
  bool interrupt_requested = false;
  std::string interrupt_reason;

  std::optional<AgentEvent> held_turn_end;
  absl::Time exit_by = absl::InfiniteFuture();  // exit_grace after a reported turn_end
  bool fatal_seen = false;
  std::string last_message;
  std::string line;
  bool dropping_line = false;
  std::string stderr_tail;

  int status = 0;
  bool exited = false;  // reaped: from then on its ids may belong to others
  const auto signal_group = [&](int sig) {
    if (kill(-pid_, sig) != 0) kill(pid_, sig);
  };
  const auto begin_stop = [&](Stop why) {
    if (stop != Stop::kNone || pid_ <= 0 || exited) return;
    stop = why;
    stop_stage = 1;
    signal_group(SIGINT);
    next_escalation = absl::Now() + limits_.interrupt_grace;
  };
  const auto deliver = [&](AgentEvent event) {
    if (event.kind == AgentEventKind::kTurnEnd) {
      if (!held_turn_end) {
        held_turn_end = std::move(event);
        exit_by = absl::Now() + limits_.exit_grace;
      }
      return;
    }
    if (event.kind == AgentEventKind::kAgentMessage) last_message = event.text;
    if (event.kind == AgentEventKind::kError && event.fatal) {
      fatal_seen = true;
      begin_stop(Stop::kFatal);
    }
    sink_(event);
  };
  const auto parse_line = [&](absl::string_view text) {
    for (AgentEvent& e : parser_->ParseLine(text)) deliver(std::move(e));
  };
  const auto take_stdout = [&](const char* data, size_t n) {
    absl::string_view chunk(data, n);
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const absl::string_view piece = chunk.substr(0, nl);
      if (!dropping_line) line.append(piece.data(), piece.size());
      if (line.size() > limits_.max_line_bytes) {
        deliver(AgentEvent::Error(AgentErrorKind::kOutput, false,
                                  absl::StrCat("a stdout line longer than ",
                                               limits_.max_line_bytes, " bytes was dropped")));
        line.clear();
        dropping_line = true;
      }
      if (nl == absl::string_view::npos) break;
      if (!dropping_line) parse_line(line);
      line.clear();
      dropping_line = false;
      chunk.remove_prefix(nl + 1);
    }
  };
  const auto take_stderr = [&](const char* data, size_t n) {
    stderr_tail.append(data, n);
    if (stderr_tail.size() > 2 * limits_.stderr_tail_bytes) {
      stderr_tail.erase(0, stderr_tail.size() - limits_.stderr_tail_bytes);
    }
  };

  if (pid_ > 0) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    const absl::Time deadline = started_at_ + limits_.wall_time;
    absl::Time exited_at = absl::InfiniteFuture();
    char buf[65536];
    while (true) {
      if (!exited) {
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        // WNOWAIT: the child stays a zombie, so its process group id cannot
        // be reused while what is left of the group is killed.
        if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) {
          kill(-pid_, SIGKILL);
          while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
          }
          exited = true;
          exited_at = absl::Now();
        }
      }
      const absl::Time now = absl::Now();
      if (exited && (stdout_fd_ < 0 && stderr_fd_ < 0)) break;
      if (exited && now - exited_at > kDrainAfterExit) break;
      if (!exited) {
        {
          absl::MutexLock lock(&mu_);
          if (interrupt_reason_ && stop == Stop::kNone) {
            interrupt_requested = true;
            interrupt_reason = *interrupt_reason_;
          }
        }
        if (interrupt_requested) begin_stop(Stop::kInterrupt);
        if (now >= deadline) begin_stop(Stop::kTimeout);
        if (now >= exit_by) begin_stop(Stop::kLingering);
        if (stop != Stop::kNone && now >= next_escalation) {
          ++stop_stage;
          signal_group(stop_stage == 2 ? SIGTERM : SIGKILL);
          next_escalation = stop_stage == 2 ? now + limits_.terminate_grace
                                            : absl::InfiniteFuture();
        }
      }

      absl::Time wake_at =
          exited ? exited_at + kDrainAfterExit
                 : std::min(stop == Stop::kNone ? std::min(deadline, exit_by) : next_escalation,
                            pidfd >= 0 ? absl::InfiniteFuture() : now + kExitPollInterval);
      int timeout_ms = -1;
      if (wake_at != absl::InfiniteFuture()) {
        timeout_ms = static_cast<int>(std::clamp<int64_t>(
            absl::ToInt64Milliseconds(absl::Ceil(wake_at - now, absl::Milliseconds(1))), 0,
            1 << 30));
      }
      pollfd fds[4];
      int nfds = 0;
      for (int fd : {stdout_fd_, stderr_fd_, wake_fd_, exited ? -1 : pidfd}) {
        if (fd >= 0) fds[nfds++] = {fd, POLLIN, 0};
      }
      if (poll(fds, nfds, timeout_ms) < 0 && errno != EINTR) break;

      for (int* fd : {&stdout_fd_, &stderr_fd_}) {
        while (*fd >= 0) {
          const ssize_t got = read(*fd, buf, sizeof(buf));
          if (got > 0) {
            if (fd == &stdout_fd_) take_stdout(buf, static_cast<size_t>(got));
            else take_stderr(buf, static_cast<size_t>(got));
          } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            CloseFd(fd);  // end of output
          } else if (errno == EAGAIN) {
            break;
          }
        }
      }
      uint64_t ignored;
      if (wake_fd_ >= 0) (void)!read(wake_fd_, &ignored, sizeof(ignored));
    }
    if (pidfd >= 0) close(pidfd);
    if (!exited) {
      // poll failed: end the agent rather than leave it unattended.
      kill(-pid_, SIGKILL);
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      exited = true;
    }
    if (!line.empty() && !dropping_line) parse_line(line);
  }
  CloseFd(&stdout_fd_);
  CloseFd(&stderr_fd_);

  AgentExit result;
  result.started = pid_ > 0;
  result.stderr_tail = ValidUtf8(stderr_tail.size() > limits_.stderr_tail_bytes
                                     ? stderr_tail.substr(stderr_tail.size() -
                                                          limits_.stderr_tail_bytes)
                                     : stderr_tail);
  if (result.started && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (result.started && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.timed_out = stop == Stop::kTimeout;
  result.interrupted = stop == Stop::kInterrupt;

  std::optional<AgentEvent> failure;
  if (spawn_error_) {
    failure = *spawn_error_;
  } else if (result.timed_out) {
    failure = AgentEvent::Error(
        AgentErrorKind::kTimeout, true,
        WithStderr(absl::StrCat("agent \"", program_, "\" ran past its wall-time limit of ",
                                absl::FormatDuration(limits_.wall_time), " and was stopped"),
                   result.stderr_tail));
  } else if (result.interrupted) {
    failure = AgentEvent::Error(AgentErrorKind::kInterrupted, false,
                                absl::StrCat("agent \"", program_, "\" interrupted: ",
                                             interrupt_reason));
  } else if (stop == Stop::kNone && !fatal_seen && result.signal != 0) {
    failure = AgentEvent::Error(
        AgentErrorKind::kCrash, true,
        WithStderr(absl::StrCat("agent \"", program_, "\" was ended by signal ",
                                SignalName(result.signal)),
                   result.stderr_tail));
  } else if (stop == Stop::kNone && !fatal_seen && result.exit_code != 0) {
    failure = AgentEvent::Error(
        LooksLikeAuthFailure(result.stderr_tail) ? AgentErrorKind::kAuth : AgentErrorKind::kExit,
        true,
        WithStderr(absl::StrCat("agent \"", program_, "\" exited with status ", result.exit_code),
                   result.stderr_tail));
  }
  if (failure) deliver(*failure);

  const bool failed = failure.has_value() || fatal_seen;
  AgentEvent turn_end = held_turn_end ? *held_turn_end
                                      : AgentEvent::TurnEnd(failed, failure ? failure->text
                                                                            : last_message);
  turn_end.is_error = turn_end.is_error || failed;
  result.turn_error = turn_end.is_error;
  result.elapsed = absl::Now() - started_at_;
  sink_(turn_end);

  absl::MutexLock lock(&mu_);
  done_ = true;
  exit_ = std::move(result);
}

absl::StatusOr<AgentExit> RunAgentTurn(const AgentAdapter& adapter, const TurnRequest& turn,
                                       const AgentLimits& limits, AgentEventSink sink) {
  absl::StatusOr<AgentInvocation> invocation = adapter.Invocation(turn);
  if (!invocation.ok()) return invocation.status();
  std::unique_ptr<AgentProcess> process =
      AgentProcess::Start(*invocation, adapter.NewParser(), limits, std::move(sink));
  return process->Wait();
}

}  // namespace kseek::agent
