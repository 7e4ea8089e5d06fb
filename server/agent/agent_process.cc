#include "server/agent/agent_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
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
#include "base/child_process.h"
#include "server/agent/confinement.h"
#include "server/agent/text.h"

extern char** environ;

namespace kseek::agent {
namespace {

// After the agent exits, how long its output pipes may stay open (held by a
// process that left its process group) before the run stops reading them.
constexpr absl::Duration kDrainAfterExit = absl::Seconds(2);
constexpr int kStderrLinesInMessages = 5;

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// The merged environment: this process's, overridden by `additions`. A
// confined agent gets none of this process's KSEEK_* variables (its own
// come in `additions`).
std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& additions,
                                           bool confined) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos) continue;
    if (confined && absl::StartsWith(entry, "KSEEK_")) continue;
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
  const std::vector<std::string> env =
      MergedEnvironment(invocation.env, invocation.confinement.has_value());
  absl::StatusOr<std::string> resolved = ResolveProgram(program, PathOf(env));
  if (!resolved.ok()) {
    return fail(AgentErrorKind::kNotInstalled, std::string(resolved.status().message()));
  }

  ChildSpec spec;
  spec.path = *resolved;
  spec.argv = invocation.argv;
  spec.env = env;
  spec.cwd = invocation.cwd;
  if (const std::optional<AgentConfinement>& c = invocation.confinement) {
    confined_uid_ = c->uid;
    spec.uid = c->uid;
    spec.gid = c->gid;
    spec.rlimits = c->rlimits;
    if (c->isolate_network) {
      spec.unshare_flags = CLONE_NEWNET;
      spec.unshare_required = true;
    }
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  if (!child.ok()) {
    const bool cannot_exec = child.status().code() == absl::StatusCode::kFailedPrecondition &&
                             absl::StartsWith(child.status().message(), "cannot run");
    return fail(cannot_exec ? AgentErrorKind::kNotInstalled : AgentErrorKind::kStart,
                absl::StrCat("agent program \"", program, "\" (", *resolved,
                             ") could not be started: ", child.status().message()));
  }
  child_ = *std::move(child);
  pid_ = child_->pid();
  // A line of max_line_bytes or more is one to drop (ChildProcess delivers
  // its first part).
  child_->set_max_line_bytes(limits_.max_line_bytes + 1);
  child_->set_drain(kDrainAfterExit);
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
  std::string interrupt_reason;
  std::optional<AgentEvent> held_turn_end;
  absl::Time exit_by = absl::InfiniteFuture();  // exit_grace after a reported turn_end
  bool fatal_seen = false;
  std::string last_message;
  std::string stderr_tail;

  const auto begin_stop = [&](Stop why) {
    if (stop != Stop::kNone || child_ == nullptr || child_->reaped()) return;
    stop = why;
    // What Ctrl-C sends first: the CLIs end their turn on SIGINT.
    child_->Stop({{SIGINT, limits_.interrupt_grace},
                  {SIGTERM, limits_.terminate_grace},
                  {SIGKILL, absl::ZeroDuration()}});
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

  if (child_ != nullptr) {
    child_->OnStdoutLine([&](absl::string_view line) {
      if (line.size() > limits_.max_line_bytes) {
        deliver(AgentEvent::Error(AgentErrorKind::kOutput, false,
                                  absl::StrCat("a stdout line longer than ",
                                               limits_.max_line_bytes, " bytes was dropped")));
        return;
      }
      for (AgentEvent& e : parser_->ParseLine(line)) deliver(std::move(e));
    });
    child_->OnStderrLine([&](absl::string_view line) {
      absl::StrAppend(&stderr_tail, line, "\n");
      if (stderr_tail.size() > 2 * limits_.stderr_tail_bytes) {
        stderr_tail.erase(0, stderr_tail.size() - limits_.stderr_tail_bytes);
      }
    });
    const absl::Time deadline = started_at_ + limits_.wall_time;
    while (true) {
      if (!child_->reaped()) {
        {
          absl::MutexLock lock(&mu_);
          if (interrupt_reason_ && stop == Stop::kNone) interrupt_reason = *interrupt_reason_;
        }
        const absl::Time now = absl::Now();
        if (!interrupt_reason.empty()) begin_stop(Stop::kInterrupt);
        if (now >= deadline) begin_stop(Stop::kTimeout);
        if (now >= exit_by) begin_stop(Stop::kLingering);
      }
      const absl::Time until =
          stop == Stop::kNone ? std::min(deadline, exit_by) : absl::InfiniteFuture();
      const PumpResult r = child_->Pump(until, {wake_fd_});
      uint64_t ignored;
      if (r.woken && wake_fd_ >= 0) (void)!read(wake_fd_, &ignored, sizeof(ignored));
      if (r.exited) break;
    }
    child_->Wait();
    // What the agent left behind under its own user (a daemon that left its
    // process group) ends with its turn.
    if (confined_uid_) KillAllProcessesOf(*confined_uid_);
  }

  AgentExit result;
  result.started = child_ != nullptr;
  result.stderr_tail = ValidUtf8(stderr_tail.size() > limits_.stderr_tail_bytes
                                     ? stderr_tail.substr(stderr_tail.size() -
                                                          limits_.stderr_tail_bytes)
                                     : stderr_tail);
  int code = 0;
  if (result.started && child_->ExitedNormally(&code)) result.exit_code = code;
  if (result.started) result.signal = child_->TermSignal();
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
