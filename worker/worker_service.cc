// The Worker service: attempt admission, the attempt thread, and the event stream
// (worker_service.h).
#include "worker/worker_service.h"

#include <signal.h>

#include <cstring>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/log.h"
#include "proto/convert.h"
#include "proto/job_credential.h"
#include "proto/request.h"

namespace kseek {

namespace v1 = ::kernelseek::v1;

// The server side of one Evaluate stream. The attempt thread queues events
// (Send) and ends the stream (Close); gRPC's callbacks write them one at a
// time. The object deletes itself once gRPC is done with it (OnDone) and
// the attempt has closed it, whichever comes last. When the client goes away
// the remaining events are dropped and the attempt runs to its end.
class WorkerService::AttemptStream final : public grpc::ServerWriteReactor<v1::EvaluationEvent> {
 public:
  explicit AttemptStream(std::string evaluation_id) : evaluation_id_(std::move(evaluation_id)) {}

  void Send(v1::EvaluationEvent event) {
    event.set_evaluation_id(evaluation_id_);
    absl::MutexLock lock(&mu_);
    if (cancelled_ || finished_) return;
    queue_.push_back(std::move(event));
    PumpLocked();
  }

  // No more events: the stream finishes with `status` once the queue is
  // written.
  void Close(grpc::Status status = grpc::Status::OK) {
    bool release;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      end_status_ = std::move(status);
      PumpLocked();
      release = done_;
    }
    if (release) delete this;
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) cancelled_ = true;
    PumpLocked();
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    PumpLocked();
  }

  void OnDone() override {
    bool release;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      release = closed_;
    }
    if (release) delete this;
  }

 private:
  // Starts the next write, or finishes the stream when nothing is left.
  void PumpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_) return;
    if (cancelled_) {
      queue_.clear();
      finished_ = true;
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    if (!queue_.empty()) {
      in_flight_ = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      StartWrite(&in_flight_);
      return;
    }
    if (closed_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  const std::string evaluation_id_;
  absl::Mutex mu_;
  std::deque<v1::EvaluationEvent> queue_ ABSL_GUARDED_BY(mu_);
  v1::EvaluationEvent in_flight_ ABSL_GUARDED_BY(mu_);  // the event being written
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);         // what Close asked for
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;     // the attempt sends nothing more
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;  // the client went away
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // Finish was called
  bool done_ ABSL_GUARDED_BY(mu_) = false;       // OnDone ran
};

namespace {

// A stop signal that ended a runner child: sandboxed children ignore
// SIGTERM, SIGINT and SIGHUP, so one of these means the process was stopped
// from outside (by a batch system stopping the whole job, by the kernel's
// OOM killer), not that the candidate failed, when the worker is draining.
bool StoppedFromOutside(const ScenarioResult& result) {
  if (result.status != ScenarioStatus::kCrash) return false;
  const int sig = result.runner_signal;
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGKILL;
}

// A stream refused before it started.
class RejectedStream final : public grpc::ServerWriteReactor<v1::EvaluationEvent> {
 public:
  explicit RejectedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

WorkerService::WorkerService(WorkerOptions options) : options_(std::move(options)) {}

WorkerService::~WorkerService() { WaitIdle(); }

v1::WorkerInfo WorkerService::CurrentInfo() const {
  v1::WorkerInfo info;
  info.set_target(TargetName(options_.target));
  info.set_device_name(options_.device.name);
  info.set_sm_count(options_.device.sm_count);
  info.set_memory_bytes(options_.device.memory_bytes);
  info.set_compiler_version(options_.compiler_version);
  info.set_gpu(options_.target == Target::kHost ? -1 : options_.gpu);
  info.set_confinement(options_.confinement);
  absl::MutexLock lock(&mu_);
  info.set_worker_id(worker_id_);
  info.set_address(address_);
  info.set_queue_length(busy_ ? 1 : 0);
  info.set_draining(draining_);
  return info;
}

void WorkerService::SetWorkerId(const std::string& id) {
  absl::MutexLock lock(&mu_);
  worker_id_ = id;
}

void WorkerService::SetAddress(const std::string& address) {
  absl::MutexLock lock(&mu_);
  address_ = address;
}

void WorkerService::SetJobCredential(const std::string& credential) {
  absl::MutexLock lock(&mu_);
  job_credential_ = credential;
}

void WorkerService::StartDraining() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
}

bool WorkerService::Draining() const {
  absl::MutexLock lock(&mu_);
  return draining_;
}

void WorkerService::WaitIdle() {
  std::thread finished;
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(+[](bool* busy) { return !*busy; }, &busy_));
    finished = std::move(attempt_thread_);
  }
  if (finished.joinable()) finished.join();
}

grpc::ServerUnaryReactor* WorkerService::Info(grpc::CallbackServerContext* context,
                                              const v1::WorkerInfoRequest* request,
                                              v1::WorkerInfo* reply) {
  *reply = CurrentInfo();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<v1::EvaluationEvent>* WorkerService::Evaluate(
    grpc::CallbackServerContext* context, const v1::Attempt* attempt) {
  const std::string& target = attempt->request().target();
  auto reject = [&](grpc::StatusCode code, const std::string& message) {
    Log(absl::StrCat("refused evaluation ", attempt->evaluation_id(), ": ", message));
    return new RejectedStream(grpc::Status(code, message));
  };
  // The credential comes first: a caller without it learns nothing else
  // about this worker (not even whether it is busy).
  const auto& metadata = context->client_metadata();
  const auto presented = metadata.find(kJobCredentialMetadata);
  const absl::string_view credential =
      presented == metadata.end()
          ? absl::string_view()
          : absl::string_view(presented->second.data(), presented->second.size());
  absl::MutexLock lock(&mu_);
  if (!JobCredentialMatches(credential, job_credential_) &&
      !JobCredentialMatches(credential, options_.static_job_credential)) {
    return reject(grpc::StatusCode::UNAUTHENTICATED,
                  presented == metadata.end()
                      ? absl::StrCat("no job credential (metadata ", kJobCredentialMetadata,
                                     "): this worker runs attempts only for its coordinator")
                      : "the job credential is not this worker's coordinator's");
  }
  if (draining_) return reject(grpc::StatusCode::UNAVAILABLE, "worker is draining");
  // An attempt for another target could never run here, busy or not.
  if (target != TargetName(options_.target)) {
    return reject(grpc::StatusCode::FAILED_PRECONDITION,
                  absl::StrCat("request.target: this worker serves target ",
                               TargetName(options_.target), ", the attempt is for target '", target,
                               "'"));
  }
  if (busy_) {
    return reject(grpc::StatusCode::RESOURCE_EXHAUSTED,
                  absl::StrCat("worker is busy with evaluation ", current_evaluation_));
  }
  busy_ = true;
  current_evaluation_ = attempt->evaluation_id();
  // The previous attempt's thread is ending: after clearing busy_ it only sends
  // its last event and closes its stream.
  if (attempt_thread_.joinable()) attempt_thread_.join();
  auto* stream = new AttemptStream(attempt->evaluation_id());
  attempt_thread_ = std::thread([this, stream, copy = *attempt] { RunAttempt(stream, copy); });
  return stream;
}

void WorkerService::RunAttempt(AttemptStream* stream, const v1::Attempt& attempt) {
  absl::StatusOr<v1::EvaluationEvent> last = Execute(stream, attempt);
  // The worker is free before the client can see the end of the attempt, so
  // that a next attempt sent on the verdict is taken.
  {
    absl::MutexLock lock(&mu_);
    busy_ = false;
    current_evaluation_.clear();
  }
  if (!last.ok()) {
    stream->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, std::string(last.status().message())));
    return;
  }
  stream->Send(*std::move(last));
  stream->Close();
}

absl::StatusOr<v1::EvaluationEvent> WorkerService::Execute(AttemptStream* stream,
                                                           const v1::Attempt& attempt) {
  const std::string label =
      absl::StrCat("evaluation ", attempt.evaluation_id(), " (attempt ", attempt.number(), ")");
  auto failed = [&](absl::string_view error) {
    Log(absl::StrCat(label, " failed: ", error));
    v1::EvaluationEvent event;
    event.mutable_failed()->set_error(std::string(error));
    return event;
  };

  absl::StatusOr<std::unique_ptr<UnpackedRequest>> unpacked = UnpackedRequest::Create(attempt.request());
  if (!unpacked.ok()) return failed(unpacked.status().message());
  const TaskSpec& task = (*unpacked)->task();
  EvalRequest& eval = (*unpacked)->mutable_eval();
  eval.cache_dir = options_.cache_dir;
  eval.work_dir = options_.work_dir;
  eval.runner_path = options_.runner_path;
  eval.gpu = options_.gpu;
  eval.compile_jobs = options_.compile_jobs;
  eval.sandbox = options_.sandbox;
  const size_t scenarios =
      eval.scenarios.empty() ? ScenariosFor(task, eval.target).size() : eval.scenarios.size();

  v1::EvaluationEvent started;
  v1::Started* s = started.mutable_started();
  s->set_worker_id(CurrentInfo().worker_id());
  s->set_device(options_.device.name);
  s->set_attempt(attempt.number());
  s->set_scenarios(static_cast<int>(scenarios));
  stream->Send(std::move(started));
  Log(absl::StrCat(label, ": task ", task.name, ", ", scenarios, " scenarios"));

  // A runner stopped from outside while draining ends the attempt as
  // interrupted: no crash is reported against the candidate, and the stream
  // ends UNAVAILABLE so that the coordinator runs the evaluation elsewhere.
  // The check is made as each scenario ends and again at the end of the
  // attempt, when a stop signal that reached the runner first has certainly
  // reached the worker too. Events after an interruption are not sent.
  std::string interrupted;
  auto check = [&](const ScenarioResult& r) {
    if (!interrupted.empty() || !StoppedFromOutside(r) || !Draining()) return;
    interrupted = absl::StrCat("worker is draining and evaluation ", attempt.evaluation_id(),
                               " was interrupted: its runner was killed by signal ",
                               r.runner_signal, " (", strsignal(r.runner_signal),
                               ") from outside during scenario ", r.name,
                               "; it is to run again elsewhere");
    Log(absl::StrCat(label, ": ", interrupted));
  };
  absl::StatusOr<Verdict> verdict = kseek::Evaluate(task, eval, [&](const EvalProgress& progress) {
    if (progress.stage != EvalProgress::kScenarioDone || progress.last == nullptr) return;
    check(*progress.last);
    if (!interrupted.empty()) return;
    v1::EvaluationEvent event;
    *event.mutable_scenario() = ToProto(*progress.last);
    stream->Send(std::move(event));
  });
  if (verdict.ok()) {
    for (const ScenarioResult& r : verdict->scenarios) check(r);
  }
  if (!interrupted.empty()) return absl::UnavailableError(interrupted);
  if (!verdict.ok()) return failed(verdict.status().message());
  Log(absl::StrCat(label, ": done, ", verdict->all_correct ? "all correct" : "not all correct",
                   verdict->geomean_speedup
                       ? absl::StrFormat(", geomean speedup %.3fx", *verdict->geomean_speedup)
                       : ""));
  v1::EvaluationEvent event;
  *event.mutable_verdict() = ToProto(*verdict);
  return event;
}

}  // namespace kseek
