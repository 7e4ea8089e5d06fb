// The Worker gRPC service of kseek-worker (proto/kernelseek/v1/worker.proto).
//
// Evaluate runs attempts only for the coordinator: a call without the job
// credential (proto/job_credential.h) the coordinator gave at registration,
// or the one of --job-credential-file, gets UNAUTHENTICATED before anything
// else is looked at, and the attempt never starts. Info needs none.
//
// It runs one attempt at a time: once draining has begun any attempt gets
// UNAVAILABLE, an attempt for another target FAILED_PRECONDITION, and an attempt
// while another is in hand RESOURCE_EXHAUSTED. An attempt runs on its own thread:
// the request is unpacked (UnpackedRequest), evaluated by the harness
// (kseek::Evaluate, whose compiles run on a pool of `compile_jobs` threads
// and whose runner children are sandboxed), and its events are streamed back
// as they happen: Started, a ScenarioResult per finished scenario, then the
// Verdict, or Failed when the attempt could not be carried out. An attempt whose
// runner was killed from outside (SIGTERM, SIGINT, SIGHUP or SIGKILL) while
// the worker drains is interrupted instead: no verdict, and the stream ends
// UNAVAILABLE, which tells the coordinator to run it on another worker.
//
// Thread-safe. The service must outlive the gRPC server it is registered
// with; call StartDraining() and WaitIdle() before shutting the server down.
#ifndef KERNELSEEK_WORKER_WORKER_SERVICE_H_
#define KERNELSEEK_WORKER_WORKER_SERVICE_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "harness/src/evaluate.h"
#include "harness/src/task.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "worker/device_check.h"

namespace kseek {

struct WorkerOptions {
  Target target = Target::kHost;
  int gpu = 0;
  WorkerDevice device;          // from CheckDevice
  std::string compiler_version; // from CheckCompiler
  std::string cache_dir;        // compile cache; empty: the harness default
  std::string work_dir;         // attempts' private scratch folders; empty: temp dir
  std::string runner_path;      // kseek-runner; empty: beside this executable
  int compile_jobs = 2;         // compiles of an attempt run this many at once
  SandboxOptions sandbox;       // for the runner children
  std::string confinement;      // WorkerInfo.confinement: how kernels are confined, in words
  // A job credential accepted besides the registration's (a worker listed
  // in the coordinator's configuration); empty: none.
  std::string static_job_credential;
};

class WorkerService final : public kernelseek::v1::Worker::CallbackService {
 public:
  explicit WorkerService(WorkerOptions options);
  ~WorkerService() override;  // waits for the attempt in hand

  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  grpc::ServerWriteReactor<kernelseek::v1::EvaluationEvent>* Evaluate(
      grpc::CallbackServerContext* context, const kernelseek::v1::Attempt* attempt) override;
  grpc::ServerUnaryReactor* Info(grpc::CallbackServerContext* context,
                                 const kernelseek::v1::WorkerInfoRequest* request,
                                 kernelseek::v1::WorkerInfo* reply) override;

  // What Info returns: the static description plus the current id, queue
  // length and draining state.
  kernelseek::v1::WorkerInfo CurrentInfo() const;

  // The id the coordinator assigned (empty while unregistered).
  void SetWorkerId(const std::string& id);
  // Where the service is reached (known once the server is bound).
  void SetAddress(const std::string& address);
  // The job credential of the current registration; empty (the
  // registration was refused) accepts none but the static one.
  void SetJobCredential(const std::string& credential);

  // From now on Evaluate answers UNAVAILABLE; the attempt in hand goes on.
  void StartDraining();
  bool Draining() const;
  // Blocks until no attempt is in hand and its thread has queued its last event.
  void WaitIdle();

 private:
  class AttemptStream;

  // The body of an attempt's thread: Execute, then the last event and the end
  // of the stream.
  void RunAttempt(AttemptStream* stream, const kernelseek::v1::Attempt& attempt);
  // Unpacks and evaluates the attempt, streaming Started and the scenario
  // results; returns the last event (the Verdict, or Failed), or
  // UNAVAILABLE when the attempt was interrupted.
  absl::StatusOr<kernelseek::v1::EvaluationEvent> Execute(AttemptStream* stream,
                                                          const kernelseek::v1::Attempt& attempt);

  const WorkerOptions options_;
  mutable absl::Mutex mu_;
  std::string worker_id_ ABSL_GUARDED_BY(mu_);
  std::string address_ ABSL_GUARDED_BY(mu_);
  std::string job_credential_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::string current_evaluation_ ABSL_GUARDED_BY(mu_);
  std::thread attempt_thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kseek

#endif  // KERNELSEEK_WORKER_WORKER_SERVICE_H_
