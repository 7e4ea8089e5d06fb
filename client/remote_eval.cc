// Submitting an evaluation and following its events (remote_eval.h).
#include "remote_eval.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli.h"
#include "convert.h"

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

// Reads events until the stream ends; true once a final event arrived.
bool Follow(grpc::ClientReader<v1::EvaluationEvent>* reader, Display* display, RemoteOutcome* out,
            bool* got_event) {
  v1::EvaluationEvent event;
  while (reader->Read(&event)) {
    *got_event = true;
    if (out->evaluation_id.empty()) out->evaluation_id = event.evaluation_id();
    switch (event.event_case()) {
      case v1::EvaluationEvent::kAccepted: display->Accepted(event.evaluation_id()); break;
      case v1::EvaluationEvent::kQueued: display->Queued(event.queued()); break;
      case v1::EvaluationEvent::kStarted: display->Started(event.started()); break;
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

}  // namespace

int SubmitAndWait(Remote& remote, const std::string& command, const v1::EvaluationRequest& request,
                  bool progress, RemoteOutcome* out) {
  *out = RemoteOutcome();
  Display display(progress, request.target());
  grpc::ClientContext context;
  remote.Prepare(&context, std::chrono::milliseconds(0));
  auto reader = remote.coordinator().SubmitEvaluation(&context, request);
  bool got_event = false;
  bool finished = Follow(reader.get(), &display, out, &got_event);
  // Drain the stream so Finish does not wait on unread messages.
  if (finished) context.TryCancel();
  grpc::Status status = reader->Finish();
  if (finished) return kExitOk;
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
    sleep(1);
    ++idle_seconds;
    grpc::ClientContext watch_context;
    remote.Prepare(&watch_context, std::chrono::milliseconds(0));
    v1::EvaluationRef ref;
    ref.set_evaluation_id(out->evaluation_id);
    auto watch = remote.coordinator().WatchEvaluation(&watch_context, ref);
    got_event = false;
    finished = Follow(watch.get(), &display, out, &got_event);
    if (finished) watch_context.TryCancel();
    grpc::Status watch_status = watch->Finish();
    if (finished) return kExitOk;
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
