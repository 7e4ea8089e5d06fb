// Submitting an evaluation and following its events (remote_eval.h).
#include "client/remote_eval.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/cli.h"
#include "proto/convert.h"

namespace kseek::cli {

namespace v1 = ::kernelseek::v1;

namespace {

// How long a broken stream is retried (once a second) before giving up.
constexpr int kReconnectSeconds = 120;

// The terminal display: one line rewritten in place, notices above it.
class Display {
 public:
  Display(bool enabled, std::string target) : enabled_(enabled), target_(std::move(target)) {}
  ~Display() { Clear(); }

  void Accepted(const std::string& id) { Show(absl::StrCat("submitted ", id)); }
  void Queued(const v1::Queued& q) {
    std::string text = absl::StrFormat("queued: position %d for %s; %d worker%s of this target", q.position(),
                                       target_, q.matching_workers(), q.matching_workers() == 1 ? "" : "s");
    if (q.matching_workers() == 0) absl::StrAppend(&text, " \xe2\x80\x94 waiting");
    Show(text);
  }
  void Started(const v1::Started& s) {
    total_ = s.scenarios();
    done_ = 0;
    where_ = absl::StrCat(s.worker_id(), s.device().empty() ? "" : absl::StrCat(" (", s.device(), ")"),
                          s.attempt() > 1 ? absl::StrCat(", attempt ", s.attempt()) : "");
    last_.clear();
    Bar();
  }
  void Scenario(const v1::ScenarioResult& r) {
    ++done_;
    last_ = absl::StrCat(r.name(), " ", r.status());
    if (r.has_speedup()) absl::StrAppend(&last_, absl::StrFormat(" %.2fx", r.speedup()));
    Bar();
  }
  // Notices are printed whether or not stderr is a terminal.
  void Notice(const std::string& text) {
    Clear();
    fprintf(stderr, "%s\n", text.c_str());
    fflush(stderr);
  }
  void Clear() {
    if (shown_) fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  void Bar() {
    constexpr int kWidth = 24;
    int filled = total_ > 0 ? std::min(kWidth, done_ * kWidth / total_) : 0;
    std::string text = absl::StrCat("[", std::string(filled, '#'), std::string(kWidth - filled, '.'), "] ",
                                    done_, "/", total_, " on ", where_);
    if (!last_.empty()) absl::StrAppend(&text, "  last: ", last_);
    Show(text);
  }
  void Show(std::string text) {
    if (!enabled_) return;
    if (text.size() > 110) text = text.substr(0, 109) + "~";
    fprintf(stderr, "\r\033[K%s", text.c_str());
    fflush(stderr);
    shown_ = true;
  }

  bool enabled_;
  std::string target_;
  bool shown_ = false;
  int total_ = 0;
  int done_ = 0;
  std::string where_;
  std::string last_;
};

volatile sig_atomic_t g_signal = 0;
extern "C" void OnStopSignal(int sig) { g_signal = sig; }

// Stops waiting for good reasons: SIGINT (Ctrl-C), or no healthy worker of
// the target for longer than the limit. Inside a session ($KSEEK_SESSION
// set) signals keep their default: the coordinator interrupts or stops the
// agent's whole process group, and the session itself decides about its
// evaluations (a running one is entered in the trace when it finishes; a
// queued one is withdrawn, with the reason, when the session ends). A thread of its own watches both
// and cancels the call being read, so that the reader returns.
class Watchdog {
 public:
  enum class Reason { kNone, kInterrupted, kNoWorker };

  explicit Watchdog(absl::Duration no_worker_limit)
      : limit_(no_worker_limit), handle_signals_(getenv("KSEEK_SESSION") == nullptr) {
    g_signal = 0;
    if (handle_signals_) {
      struct sigaction sa = {};
      sa.sa_handler = OnStopSignal;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGINT, &sa, &old_int_);
    }
    thread_ = std::thread([this] { Watch(); });
  }
  ~Watchdog() {
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
    }
    thread_.join();
    if (handle_signals_) sigaction(SIGINT, &old_int_, nullptr);
  }

  // The call to cancel (null: none now).
  void SetCall(grpc::ClientContext* call) {
    absl::MutexLock lock(&mu_);
    call_ = call;
    if (reason_ != Reason::kNone && call_ != nullptr) call_->TryCancel();
  }
  // Whether healthy workers of the target exist, as the last Queued event said.
  void Workers(int matching) {
    absl::MutexLock lock(&mu_);
    if (matching > 0) {
      none_since_ = absl::InfiniteFuture();
    } else if (none_since_ == absl::InfiniteFuture()) {
      none_since_ = absl::Now();
    }
  }
  // An attempt started: a worker exists.
  void Started() { Workers(1); }
  Reason reason() {
    absl::MutexLock lock(&mu_);
    return reason_;
  }

 private:
  void Watch() {
    absl::MutexLock lock(&mu_);
    while (!done_) {
      mu_.AwaitWithTimeout(absl::Condition(&done_), absl::Milliseconds(50));
      if (reason_ != Reason::kNone) continue;
      if (g_signal != 0) {
        reason_ = Reason::kInterrupted;
      } else if (limit_ > absl::ZeroDuration() && absl::Now() - none_since_ > limit_) {
        reason_ = Reason::kNoWorker;
      }
      if (reason_ != Reason::kNone && call_ != nullptr) call_->TryCancel();
    }
  }

  const absl::Duration limit_;
  const bool handle_signals_;
  struct sigaction old_int_ = {};
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* call_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time none_since_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  Reason reason_ ABSL_GUARDED_BY(mu_) = Reason::kNone;
  std::thread thread_;
};

// What the waiting says about the target's workers, on stderr whether or
// not it is a terminal: once when none is there, once when one comes.
class WorkerNotes {
 public:
  WorkerNotes(std::string command, std::string address, std::string target, absl::Duration limit)
      : command_(std::move(command)), address_(std::move(address)), target_(std::move(target)), limit_(limit) {}

  void Matching(int matching, Display* display) {
    if (matching == 0 && !warned_) {
      warned_ = true;
      display->Notice(absl::StrCat(
          "kseek ", command_, ": no healthy worker of target ", target_, " at coordinator ", address_, "; ",
          limit_ > absl::ZeroDuration()
              ? absl::StrCat("waiting up to ", absl::FormatDuration(limit_), " for one (--wait-limit; 0 waits forever)")
              : "waiting for one (--wait-limit 0: no limit)"));
    } else if (matching > 0 && warned_) {
      warned_ = false;
      display->Notice(absl::StrCat("kseek ", command_, ": a worker of target ", target_, " is available"));
    }
  }

 private:
  const std::string command_, address_, target_;
  const absl::Duration limit_;
  bool warned_ = false;
};

// Reads events until the stream ends; true once a final event arrived.
bool Follow(grpc::ClientReader<v1::EvaluationEvent>* reader, Display* display, RemoteOutcome* out,
            bool* got_event, Watchdog* watchdog, WorkerNotes* notes) {
  v1::EvaluationEvent event;
  while (reader->Read(&event)) {
    *got_event = true;
    if (out->evaluation_id.empty()) out->evaluation_id = event.evaluation_id();
    switch (event.event_case()) {
      case v1::EvaluationEvent::kAccepted: display->Accepted(event.evaluation_id()); break;
      case v1::EvaluationEvent::kQueued:
        watchdog->Workers(event.queued().matching_workers());
        notes->Matching(event.queued().matching_workers(), display);
        display->Queued(event.queued());
        break;
      case v1::EvaluationEvent::kStarted:
        watchdog->Started();
        notes->Matching(1, display);
        display->Started(event.started());
        break;
      case v1::EvaluationEvent::kScenario: display->Scenario(event.scenario()); break;
      case v1::EvaluationEvent::kNotice: display->Notice(event.notice().text()); break;
      case v1::EvaluationEvent::kVerdict: out->verdict = FromProto(event.verdict()); return true;
      case v1::EvaluationEvent::kFailed:
        out->failed = event.failed().error().empty() ? "no reason given" : event.failed().error();
        return true;
      case v1::EvaluationEvent::EVENT_NOT_SET: break;
    }
  }
  return false;
}

// Cancels the evaluation the wait gave up on, and says so; the exit code.
int GiveUp(Remote& remote, const std::string& command, const std::string& target, Watchdog::Reason reason,
           absl::Duration limit, const RemoteOutcome& out) {
  std::string why = reason == Watchdog::Reason::kInterrupted
                        ? "interrupted"
                        : absl::StrCat("no healthy worker of target ", target, " at coordinator ", remote.address(),
                                       " for ", absl::FormatDuration(limit), " (--wait-limit)");
  int rc = reason == Watchdog::Reason::kInterrupted ? kExitInterrupted : kExitUsage;
  if (out.evaluation_id.empty()) {
    fprintf(stderr, "kseek %s: %s before the coordinator accepted the evaluation\n", command.c_str(), why.c_str());
    return rc;
  }
  grpc::ClientContext context;
  remote.Prepare(&context, std::chrono::milliseconds(5000));
  v1::EvaluationRef ref;
  ref.set_evaluation_id(out.evaluation_id);
  v1::CancelEvaluationResponse response;
  grpc::Status status = remote.coordinator().CancelEvaluation(&context, ref, &response);
  if (status.ok()) {
    fprintf(stderr, "kseek %s: %s; cancelled %s\n", command.c_str(), why.c_str(), out.evaluation_id.c_str());
  } else {
    fprintf(stderr, "kseek %s: %s; cancelling %s failed (%s: %s): kseek cancel %s\n", command.c_str(),
            why.c_str(), out.evaluation_id.c_str(), StatusCodeName(status.error_code()).c_str(),
            status.error_message().c_str(), out.evaluation_id.c_str());
  }
  return rc;
}

}  // namespace

int SubmitAndWait(Remote& remote, const std::string& command, const v1::EvaluationRequest& request,
                  bool progress, RemoteOutcome* out, absl::Duration no_worker_limit) {
  *out = RemoteOutcome();
  Display display(progress, request.target());
  Watchdog watchdog(no_worker_limit);
  WorkerNotes notes(command, remote.address(), request.target(), no_worker_limit);
  grpc::ClientContext context;
  remote.Prepare(&context, std::chrono::milliseconds(0));
  watchdog.SetCall(&context);
  auto reader = remote.coordinator().SubmitEvaluation(&context, request);
  bool got_event = false;
  bool finished = Follow(reader.get(), &display, out, &got_event, &watchdog, &notes);
  // Drain the stream so Finish does not wait on unread messages.
  if (finished) context.TryCancel();
  grpc::Status status = reader->Finish();
  watchdog.SetCall(nullptr);
  if (finished) return kExitOk;
  if (Watchdog::Reason reason = watchdog.reason(); reason != Watchdog::Reason::kNone) {
    display.Clear();
    return GiveUp(remote, command, request.target(), reason, no_worker_limit, *out);
  }
  if (out->evaluation_id.empty()) {
    display.Clear();
    if (status.ok()) status = grpc::Status(grpc::StatusCode::UNKNOWN, "the coordinator closed the stream");
    return ReportRpcError(command, remote, status);
  }
  // Accepted, then the stream broke (coordinator restarted, network):
  // the evaluation is stored, so watch it again.
  display.Notice(absl::StrCat("connection to coordinator ", remote.address(), " lost (",
                              status.ok() ? "stream closed" : status.error_message(),
                              "); following ", out->evaluation_id, " again"));
  int idle_seconds = 0;
  while (idle_seconds < kReconnectSeconds) {
    absl::SleepFor(absl::Seconds(1));
    ++idle_seconds;
    if (Watchdog::Reason reason = watchdog.reason(); reason != Watchdog::Reason::kNone) {
      display.Clear();
      return GiveUp(remote, command, request.target(), reason, no_worker_limit, *out);
    }
    grpc::ClientContext watch_context;
    remote.Prepare(&watch_context, std::chrono::milliseconds(0));
    watchdog.SetCall(&watch_context);
    v1::EvaluationRef ref;
    ref.set_evaluation_id(out->evaluation_id);
    auto watch = remote.coordinator().WatchEvaluation(&watch_context, ref);
    got_event = false;
    finished = Follow(watch.get(), &display, out, &got_event, &watchdog, &notes);
    if (finished) watch_context.TryCancel();
    grpc::Status watch_status = watch->Finish();
    watchdog.SetCall(nullptr);
    if (finished) return kExitOk;
    if (Watchdog::Reason reason = watchdog.reason(); reason != Watchdog::Reason::kNone) {
      display.Clear();
      return GiveUp(remote, command, request.target(), reason, no_worker_limit, *out);
    }
    if (got_event) idle_seconds = 0;
    grpc::StatusCode code = watch_status.error_code();
    if (code != grpc::StatusCode::UNAVAILABLE && code != grpc::StatusCode::OK &&
        code != grpc::StatusCode::CANCELLED && code != grpc::StatusCode::DEADLINE_EXCEEDED) {
      display.Clear();
      return ReportRpcError(command, remote, watch_status);
    }
  }
  display.Clear();
  fprintf(stderr, "kseek %s: lost coordinator %s for %d s; the evaluation continues: kseek show %s\n",
          command.c_str(), remote.address().c_str(), kReconnectSeconds, out->evaluation_id.c_str());
  return kExitUsage;
}

}  // namespace kseek::cli
