// The Worker gRPC service of kseek-worker (proto/kernelseek/v1/worker.proto).
//
// Evaluate runs jobs only for the coordinator: a call without the job
// credential (proto/job_credential.h) the coordinator gave at registration,
// or the one of --job-credential-file, gets UNAUTHENTICATED before anything
// else is looked at, and the job never starts. Info needs none.
//
// It runs one job at a time: once draining has begun any job gets
// UNAVAILABLE, a job for another target FAILED_PRECONDITION, and a job
// while another is in hand RESOURCE_EXHAUSTED. A job runs on its own thread:
// the request is unpacked (UnpackedRequest), evaluated by the harness
// (kseek::Evaluate, whose compiles run on a pool of `compile_jobs` threads
// and whose runner children are sandboxed), and its events are streamed back
// as they happen: Started, a ScenarioResult per finished scenario, then the
// Verdict, or Failed when the job could not be carried out. A job whose
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
#include "device_check.h"
#include "evaluate.h"
#include "kernelseek/v1/worker.grpc.pb.h"
#include "task.h"

namespace kseek {

struct WorkerOptions {
  Target target = Target::kHost;
  int gpu = 0;
  WorkerDevice device;          // from CheckDevice
  std::string compiler_version; // from CheckCompiler
  std::string cache_dir;        // compile cache; empty: the harness default
  std::string work_dir;         // jobs' private scratch folders; empty: temp dir
  std::string runner_path;      // kseek-runner; empty: beside this executable
  int compile_jobs = 2;         // compiles of a job run this many at once
  SandboxOptions sandbox;       // for the runner children
  std::string confinement;      // WorkerInfo.confinement: how kernels are confined, in words
  // A job credential accepted besides the registration's (a worker listed
  // in the coordinator's configuration); empty: none.
  std::string static_job_credential;
};

class WorkerService final : public kernelseek::v1::Worker::CallbackService {
 public:
  explicit WorkerService(WorkerOptions options);
  ~WorkerService() override;  // waits for the job in hand

  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  grpc::ServerWriteReactor<kernelseek::v1::EvaluationEvent>* Evaluate(
      grpc::CallbackServerContext* context, const kernelseek::v1::WorkerJob* job) override;
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

  // From now on Evaluate answers UNAVAILABLE; the job in hand goes on.
  void StartDraining();
  bool Draining() const;
  // Blocks until no job is in hand and its thread has queued its last event.
  void WaitIdle();

 private:
  class JobStream;

  // The body of a job's thread: Execute, then the last event and the end
  // of the stream.
  void RunJob(JobStream* stream, const kernelseek::v1::WorkerJob& job);
  // Unpacks and evaluates the job, streaming Started and the scenario
  // results; returns the last event (the Verdict, or Failed), or
  // UNAVAILABLE when the job was interrupted.
  absl::StatusOr<kernelseek::v1::EvaluationEvent> Execute(JobStream* stream,
                                                          const kernelseek::v1::WorkerJob& job);

  const WorkerOptions options_;
  mutable absl::Mutex mu_;
  std::string worker_id_ ABSL_GUARDED_BY(mu_);
  std::string address_ ABSL_GUARDED_BY(mu_);
  std::string job_credential_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::string current_evaluation_ ABSL_GUARDED_BY(mu_);
  std::thread job_thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kseek

#endif  // KERNELSEEK_WORKER_WORKER_SERVICE_H_
