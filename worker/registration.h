// Keeps a kseek-worker registered with its coordinator: RegisterWorker with
// the worker's WorkerInfo (the coordinator assigns the id), then a Heartbeat
// every interval the coordinator asked for, carrying the queue length and
// the draining flag. It registers again when a heartbeat answers
// known=false or after the coordinator was unreachable (it may have
// restarted), and while the coordinator is down it retries with an
// exponential backoff, forever: a worker never exits because of it.
//
// Each registration's answer carries the job credential the worker then
// requires on Evaluate (WorkerService::SetJobCredential). A coordinator that
// refuses the worker's token (UNAUTHENTICATED or PERMISSION_DENIED: it was
// revoked) ends that credential at once, and the token file is read again
// before the next registration, so that a rotated token brings a new
// credential without a restart.
//
// Runs on its own thread between Start() and Stop(); thread-safe.
#ifndef KERNELSEEK_WORKER_REGISTRATION_H_
#define KERNELSEEK_WORKER_REGISTRATION_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernelseek/v1/coordinator.grpc.pb.h"
#include "worker/worker_service.h"

namespace kseek {

struct RegistrationOptions {
  std::string coordinator;   // host:port
  std::string token;         // bearer token; empty: none sent
  std::string token_file;    // non-empty: read again (over `token`) before each registration
  std::string tls_ca_pem;    // non-empty: TLS to the coordinator with this CA
  absl::Duration rpc_deadline = absl::Seconds(5);
  absl::Duration min_backoff = absl::Milliseconds(250);
  absl::Duration max_backoff = absl::Seconds(10);
};

class Registration {
 public:
  // `service` supplies the WorkerInfo and receives the assigned id; it must
  // outlive this object.
  Registration(RegistrationOptions options, WorkerService* service);
  ~Registration();  // stops

  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

  void Start();
  // Sends a heartbeat now (e.g. draining has begun) instead of at the next
  // interval.
  void Wake();
  // Sends a last heartbeat (when registered) and ends the thread.
  void Stop();

 private:
  void Loop();
  // One RegisterWorker call; on success records the id and interval.
  bool Register();
  // One Heartbeat call: false when the coordinator could not be reached.
  // *known is its answer.
  bool Beat(bool* known);
  void Prepare(grpc::ClientContext* context) const;
  // After a refused call: a refused token ends the job credential.
  void Refused(const grpc::Status& status);
  // Waits up to `d` or until woken or stopped; true when stopping.
  bool Sleep(absl::Duration d);

  const RegistrationOptions options_;
  WorkerService* const service_;
  std::string token_;  // the one sent; used by the loop thread only
  std::unique_ptr<kernelseek::v1::Coordinator::Stub> stub_;
  // Used by the loop thread only (and by Stop() after it ended).
  std::string worker_id_;
  absl::Duration interval_ = absl::Seconds(1);
  std::string last_error_;  // of the last failed call

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kseek

#endif  // KERNELSEEK_WORKER_REGISTRATION_H_
