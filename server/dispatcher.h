// The dispatcher of kernelseekd: per-target queues of evaluations, the
// registry of workers and their health, and the attempts running on workers.
//
// Queues: one per target. Within a target, evaluations re-queued after a
// lost worker go first; the rest are served round-robin over the users with
// queued work, first in first out within a user.
//
// Workers register and heartbeat; each registration gets a new job
// credential (proto/job_credential.h), sent on every Evaluate to that
// worker. A worker that refuses the credential (UNAUTHENTICATED) is
// forgotten until it registers again, and the attempt goes back to the queue
// without counting the attempt. One that misses heartbeats for longer
// than the timeout, or whose attempt stream breaks, is unhealthy until its next
// heartbeat. An attempt is dispatched only to a healthy, idle (no attempt from us,
// and none reported by its last heartbeat), non-draining worker of the
// evaluation's target, as a Worker.Evaluate stream read by a thread of its
// own (owned by the dispatcher; Stop() joins them); the events are stored
// (progress, then the outcome in one transaction that applies only once
// per evaluation) and published to the EventHub; the Started event, the
// scenario results and the stored outcome of an evaluation of a session go
// to the session progress observer first (the SessionManager, which enters
// them in the session's trace). An attempt whose worker is lost goes back to the
// front of its queue, to be run again (the next attempt), up to a limit.
//
// WithdrawSession ends a finished session's queued evaluations as failed
// (they never run); its running one, if any, is left to finish. Cancel ends
// one evaluation as failed, stopping its attempt if it runs.
//
// Nothing accepted is dropped on a store error: Submit first asks the store
// for room (RESOURCE_EXHAUSTED on a nearly full disk); an outcome the store
// cannot take is retried, and then the evaluation ends failed with the
// reason, stored (the store's reserve is given up for it if need be) and
// published. Only when even that cannot be written is the failure published
// without being stored: the store still holds the evaluation as pending, and
// the next start runs it again.
//
// Start() rebuilds the queues from the store: evaluations that were running
// when the previous process died are queued again. Thread-safe.
#ifndef KERNELSEEK_SERVER_DISPATCHER_H_
#define KERNELSEEK_SERVER_DISPATCHER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "kernelseek/v1/coordinator.pb.h"
#include "kernelseek/v1/worker.pb.h"
#include "server/event_hub.h"
#include "server/store.h"
#include "server/thread_set.h"

namespace kseek::server {

struct DispatcherOptions {
  absl::Duration heartbeat_interval = absl::Seconds(1);  // told to workers
  absl::Duration heartbeat_timeout = absl::Seconds(5);
  int max_attempts = 5;  // then the evaluation fails
  // For dialling workers; insecure when null.
  std::shared_ptr<grpc::ChannelCredentials> worker_credentials;
  // A store write of an outcome that fails is tried this many more times,
  // waiting `store_retry_delay`, doubled each time, in between.
  int store_retries = 3;
  absl::Duration store_retry_delay = absl::Milliseconds(250);
};

// What an evaluation of a session did on its worker: an attempt started, a
// scenario finished, or it finished (Dispatcher::SetSessionProgressObserver).
struct SessionProgress {
  std::string session_id;
  std::string session_by;  // "agent" or "verification"
  std::string evaluation_id;
  int attempt = 0;
  int done = 0;   // scenarios of this attempt finished, this event's included
  int total = 0;  // scenarios this attempt runs
  // Started, ScenarioResult, or the outcome (Verdict or Failed) once stored.
  kernelseek::v1::EvaluationEvent event;
};

class Dispatcher {
 public:
  Dispatcher(Store* store, EventHub* hub, DispatcherOptions options);
  ~Dispatcher();  // Stop()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Rebuilds the queues and the worker list from the store, then starts
  // dispatching.
  absl::Status Start();
  // Stops dispatching, cancels the running attempts (they stay running in the
  // store, and the next Start queues them again) and joins their threads.
  // Idempotent.
  void Stop();

  // Stores a new evaluation (state queued, durably), opens its channel in
  // the hub and queues it. `eval.request` must have been validated.
  absl::Status Submit(const EvaluationRecord& eval);
  // Ends every queued evaluation of session `session_id` as failed with
  // `reason` (stored, and published to its watchers): none of them runs
  // later. A running one is left to finish; its outcome is stored as
  // usual. Returns the ids withdrawn. Evaluations of other sessions, and
  // those of no session, are untouched.
  std::vector<std::string> WithdrawSession(const std::string& session_id,
                                           const std::string& reason);
  // Ends evaluation `id` as failed with `reason`: a queued one leaves its
  // queue at once; a running one has its attempt's stream cancelled, and ends
  // when that stream does (a verdict that arrives first is kept).
  // FAILED_PRECONDITION when it is not pending here (it has finished).
  absl::Status Cancel(const std::string& id, const std::string& reason);
  // Calls `observer` with the Started event, each scenario result and the
  // outcome the worker sent (once stored) of every evaluation of a session,
  // on the attempt's thread, as the worker sends them and before they are
  // published to the evaluation's watchers. An empty function stops the
  // calls, once those in flight have returned.
  void SetSessionProgressObserver(std::function<void(const SessionProgress&)> observer);
  // 1-based position of a queued evaluation in its target's queue; 0 when
  // it is not queued.
  int QueuePosition(const std::string& id);

  // Workers.
  absl::StatusOr<kernelseek::v1::RegisterWorkerResponse> RegisterWorker(
      const kernelseek::v1::WorkerInfo& info);
  // Whether the worker is known (registered with this process).
  bool Heartbeat(const kernelseek::v1::HeartbeatRequest& request);
  std::vector<kernelseek::v1::WorkerStatus> ListWorkers();

 private:
  struct Worker {
    kernelseek::v1::WorkerInfo info;
    bool registered = false;  // with this process (else only from the store)
    bool healthy = false;
    int64_t last_heartbeat_ms = 0;
    int64_t last_persisted_ms = 0;
    int64_t registered_ms = 0;
    int64_t last_dispatch_ms = 0;
    std::string current;      // evaluation running there
    std::shared_ptr<grpc::Channel> channel;
    std::string job_credential;  // of its registration with this process
    std::shared_ptr<grpc::ClientContext> call;  // the running attempt's call
    std::string cancel_reason;  // why `call` was cancelled, when it was
  };
  struct Pending {
    std::string user;
    std::string target;
    std::string session_id;  // the session it belongs to, if any
    bool running = false;
    int published_position = -1;  // of the last Queued event published
    int published_matching = -1;
    std::string cancel_reason = {};  // set by Cancel while it runs
  };
  struct TargetQueue {
    std::deque<std::string> retries;  // re-queued: served first
    std::map<std::string, std::deque<std::string>> by_user;
    std::deque<std::string> users;    // with queued work, in serving order
  };
  // How an attempt ended, for the bookkeeping after it. kRetryLater: the store
  // could not be read or written to start it; it is queued again in memory
  // (the store still has it queued) and dispatching pauses a moment.
  enum class AttemptEnd { kFinished, kRequeue, kRetryLater, kStopped };

  void Loop();
  void CheckHeartbeatsLocked(int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchLocked(int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EnqueueLocked(const std::string& id, bool front) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> OrderLocked(const TargetQueue& q) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string PopLocked(TargetQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes queued `id` out of `q`.
  static void RemoveQueued(TargetQueue* q, const std::string& id);
  int MatchingWorkersLocked(const std::string& target) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Publishes a Queued event for each queued evaluation of `target` whose
  // position or matching-worker count changed.
  void PublishPositionsLocked(const std::string& target) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetUnhealthyLocked(Worker* w, const std::string& id, const std::string& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Runs one attempt on a worker (its own thread), then the bookkeeping.
  void RunAttempt(std::string id, std::string worker_id, std::shared_ptr<grpc::Channel> channel,
              std::shared_ptr<grpc::ClientContext> call);
  // *worker_refused: the worker refused the job credential.
  AttemptEnd Execute(const std::string& id, const std::string& worker_id,
                 const std::shared_ptr<grpc::Channel>& channel, grpc::ClientContext* call,
                 std::string* lost_reason, bool* worker_busy, bool* worker_refused);
  // Whether `w` can take an attempt of `target` now.
  static bool IdleFor(const Worker& w, const std::string& target);
  void Notice(const std::string& id, const std::string& text);
  // `write` again after store errors, per store_retries; the last result.
  absl::StatusOr<bool> WithRetries(const std::string& what,
                                   const std::function<absl::StatusOr<bool>()>& write);
  // Ends `id` as failed with `error`: stored (giving up the store's reserve
  // on a full disk) and published; published even when it cannot be stored.
  void EndFailed(const std::string& id, const std::string& error);
  // The reason Cancel gave for running evaluation `id`, or "".
  std::string CancelReason(const std::string& id);

  // Hands `event` of evaluation `eval` to the session progress observer.
  void ReportSessionProgress(const EvaluationRecord& eval, int attempt, int done, int total,
                             const kernelseek::v1::EvaluationEvent& event);

  Store* const store_;
  EventHub* const hub_;
  const DispatcherOptions options_;

  // Held shared while the observer runs, so that replacing it waits for the
  // calls in flight.
  absl::Mutex observer_mu_;
  std::function<void(const SessionProgress&)> session_progress_ ABSL_GUARDED_BY(observer_mu_);

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;  // something changed: dispatch again
  int running_attempts_ ABSL_GUARDED_BY(mu_) = 0;
  // No dispatch before this (after a store error on starting an attempt).
  int64_t hold_until_ms_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TargetQueue> queues_ ABSL_GUARDED_BY(mu_);
  std::thread loop_;
  ThreadSet attempt_threads_;  // RunAttempt's threads, one per running attempt; Stop() joins them
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_DISPATCHER_H_
