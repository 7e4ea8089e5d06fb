// The sessions of kernelseekd: creating them, one runner thread per session
// that has not ended (session_runner.h), human messages, cancellation, the
// trace (every append goes through here, so that watchers hear of it), and
// the entry of the agents' own evaluations into their sessions' traces.
//
// Start() resumes every session the store holds as created, running or
// verifying (after a restart). Stop() stops the runners without changing
// the sessions' states, so that the next Start() resumes them; the agents'
// running turns are interrupted.
//
// The progress of every evaluation of a session on its worker (an attempt
// started, each scenario finished) enters its trace as it happens, so that
// a watcher sees an evaluation advance rather than only its end; an agent's
// evaluation that a worker finished enters before its outcome is published
// (the linker's poll catches the rest: failures from elsewhere).
//
// Thread-safe. Wake callbacks (Subscribe) run under the manager's lock: they
// must be quick and must not call back into the manager.
#ifndef KERNELSEEK_SERVER_SESSION_MANAGER_H_
#define KERNELSEEK_SERVER_SESSION_MANAGER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernelseek/v1/session.pb.h"
#include "question_bank/src/bank.h"
#include "question_bank/src/decision_points.h"
#include "question_bank/src/scheduler.h"
#include "server/agent/agent_process.h"
#include "server/agent/allowlist.h"
#include "server/agent/confinement.h"
#include "server/auth.h"
#include "server/dispatcher.h"
#include "server/session_trace.h"
#include "server/store.h"

namespace kseek::server {

class SessionRunner;

struct SessionOptions {
  std::string workspaces_dir;  // absolute; one folder per session inside
  // The folder of the kseek binary, put first on the agents' PATH ("" : none).
  std::string kseek_dir;
  // The bank questions are chosen from (Bank has no empty default; see
  // Bank::FromQuestions). Required.
  std::optional<question_bank::Bank> bank;
  std::string bank_source;     // the file it came from, for ListBank
  question_bank::DecisionPointOptions decision;
  question_bank::SchedulerOptions scheduler;
  agent::AgentLimits agent_limits;
  // The agents sessions may run (kernelseekd --agents).
  agent::AgentAllowlist agents = agent::AgentAllowlist::Default();
  // Whether each session's agent runs as a user of its own
  // (agent/confinement.h); when not, why, and only admins start sessions.
  bool confine_agents = false;
  std::string unconfined_reason;
  // Where confined agents without network reach the coordinator
  // ("unix:/path"; empty: none).
  std::string agent_socket;
  // How often runners and the agent-evaluation linker look at the store.
  absl::Duration poll = absl::Milliseconds(200);
};

// Defaults of a session's budget (SessionBudget fields left at 0).
inline constexpr int kDefaultMaxTurns = 20;
inline constexpr int kDefaultMaxEvaluations = 100;
inline constexpr double kDefaultMaxMinutes = 240;

class SessionManager {
 public:
  // `store` and `dispatcher` must outlive the manager.
  SessionManager(Store* store, Dispatcher* dispatcher, SessionOptions options);
  ~SessionManager();  // Stop()
  SessionManager(const SessionManager&) = delete;
  SessionManager& operator=(const SessionManager&) = delete;

  // `coordinator_address` is what agents dial (HOST:PORT). Resumes the
  // sessions that have not ended and starts the linker.
  absl::Status Start(const std::string& coordinator_address);
  void Stop();

  // Validates `request` (INVALID_ARGUMENT naming the field; PERMISSION_DENIED
  // for an agent not in the allowlist, or a program or command template of
  // the request's own), refuses new work on a nearly full disk
  // (RESOURCE_EXHAUSTED, as Dispatcher::Submit does), stores the session
  // and its first event, prepares the workspace and starts it.
  absl::StatusOr<SessionRecord> Create(const Caller& caller,
                                       const kernelseek::v1::CreateSessionRequest& request);
  // A human's message for the next decision point; `now` interrupts the
  // running turn. FAILED_PRECONDITION when the session has ended.
  absl::StatusOr<int64_t> PostMessage(const std::string& session_id, const std::string& text,
                                      bool now);
  // Stops the session's agent, waits for its runner to end (the killed
  // turn's turn_end is traced), then ends the session as cancelled: the
  // cancelled state is the last event of the trace. FAILED_PRECONDITION
  // when it had already ended.
  absl::Status Cancel(const std::string& session_id, const std::string& by);

  // Appends events (and a change of the session's row) and wakes the
  // session's watchers. A change of state is refused (FAILED_PRECONDITION)
  // once the session has ended. A change to a final state withdraws the
  // session's queued evaluations from the dispatcher (they end as failed,
  // "session ID was cancelled" or "session ID ended (STATE)"); one already
  // running is left to finish, and is not entered in the ended trace.
  absl::StatusOr<std::vector<StoredEvent>> Append(const std::string& session_id,
                                                  std::vector<nlohmann::json> events,
                                                  const SessionChange& change = {},
                                                  const std::string& logged_evaluation = "");
  // Appends an `evaluation` event for a finished evaluation, a `best` event
  // when it beats the session's best, then `more` events, with `change`.
  // Only an evaluation on the task's full scenario set for the session's
  // target (`full_set`: every verification; an agent's evaluation when
  // OnFullScenarioSet) can be a best, and only when all correct. A session
  // that has ended gets no event (the evaluation is only marked as seen)
  // unless `change` sets a state.
  absl::StatusOr<std::vector<StoredEvent>> AppendEvaluation(
      const std::string& session_id, const EvaluationSummary& summary, const std::string& by,
      bool full_set, std::vector<nlohmann::json> more, const SessionChange& change,
      const std::string& logged_evaluation);

  // Enters an evaluation's progress on its worker in its session's trace
  // (`evaluation_started`, then a `scenario` event per scenario as it
  // finishes) unless the session has ended, and an agent's evaluation that
  // has finished (LinkAgentEvaluations); the dispatcher calls it from the
  // manager's construction until Stop(). A store error is logged: the evaluation's own events are untouched.
  void OnEvaluationProgress(const SessionProgress& progress);

  // Calls `wake` after each append to the session (and once when the
  // manager stops). Returns a handle for Unsubscribe.
  uint64_t Subscribe(const std::string& session_id, std::function<void()> wake);
  void Unsubscribe(const std::string& session_id, uint64_t handle);

  // Enters every finished agent evaluation not yet in its session's trace
  // (the linker does this every poll; a runner calls it at a turn's end so
  // that the turn's evaluations precede its verification).
  void LinkAgentEvaluations();

  // Whether an agent's evaluation ran on the session's target with the
  // task's own scenario set (no --scenarios), the session's task, and as
  // many scenarios as the session's task has for that target.
  bool OnFullScenarioSet(const EvaluationRecord& eval);

  // Per bank question id, over every session.
  absl::StatusOr<std::map<std::string, question_bank::QuestionStats>> QuestionStats();

  const question_bank::Bank& bank() const { return *options_.bank; }
  const std::string& bank_source() const { return options_.bank_source; }
  const SessionOptions& options() const { return options_; }
  Store* store() const { return store_; }
  Dispatcher* dispatcher() const { return dispatcher_; }
  // What agents dial; set by Start.
  std::string coordinator_address();
  // A confined session's agent user and home (created when missing), with
  // every process of the user killed, so that nothing of the agent runs
  // while the coordinator writes into its folders. Without confinement:
  // nullopt.
  struct AgentHome {
    agent::AgentUser user;
    std::string home;
  };
  absl::StatusOr<std::optional<AgentHome>> PrepareAgentUser(const SessionRecord& session);
  // Gives the session's workspace and home to its agent's user (0700).
  absl::Status GiveToAgent(const SessionRecord& session, const AgentHome& home);
  // Once a session has ended: its agent user's processes killed, its files
  // given back to the coordinator's user, the user removed.
  void ReleaseAgentUser(const SessionRecord& session);
  // The home folder of a session's confined agent.
  std::string AgentHomeOf(const std::string& session_id) const;

  // What runs for a session's agent: its allowlist entry (as the allowlist
  // is now), with the session's model.
  absl::StatusOr<agent::AllowedAgent> AgentOf(const kernelseek::v1::AgentSpec& spec) const;
  // The brief of a session (session_workspace.h) with this coordinator's
  // bank and kseek.
  std::string Brief(const std::string& task, const kernelseek::v1::CreateSessionRequest& spec,
                    double goal_speedup) const;

 private:
  struct Watchers {
    std::map<uint64_t, std::function<void()>> wakes;
  };

  void StartRunnerLocked(const std::string& session_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LinkLoop();
  void Wake(const std::string& session_id);

  Store* const store_;
  Dispatcher* const dispatcher_;
  const SessionOptions options_;

  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Whether the dispatcher reports evaluation progress to this manager.
  bool observing_ ABSL_GUARDED_BY(mu_) = false;
  std::string coordinator_address_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<SessionRunner>> runners_ ABSL_GUARDED_BY(mu_);
  std::thread linker_;

  absl::Mutex watch_mu_;
  uint64_t next_handle_ ABSL_GUARDED_BY(watch_mu_) = 1;
  std::map<std::string, Watchers> watchers_ ABSL_GUARDED_BY(watch_mu_);

  // Serialises the read-compare-append of a session's best speedup.
  absl::Mutex best_mu_;
  // One LinkAgentEvaluations at a time, so that none is entered twice.
  absl::Mutex link_mu_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_SESSION_MANAGER_H_
