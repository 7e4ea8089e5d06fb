// SessionRunner: the goal loop of one session, on a thread of its own.
//
//   loop:
//     a turn ended and is not verified yet -> verify: the coordinator submits
//       kernel.cu (full suite, fresh seed) through its own dispatcher and
//       waits; all correct and geomean >= goal -> succeeded (the only way to
//       succeed)
//     budget spent (turns, evaluations, wall time, cost) -> budget_spent
//     the next prompt: the brief on the first turn; later, after the
//       decision points (decision_points.h), a waiting human message first,
//       else a bank question (scheduler.h), else "carry on"; in self-ask
//       mode the brief holds the bank, no bank question is asked, and each
//       "APPLIED-QUESTION: id" line of the agent is traced as a question
//       with source "self"
//     run the turn through the agent adapter (resuming the agent's own
//       conversation when it can), every agent event into the trace
//
// The agent never ends a session. A fatal agent failure (the program is
// missing or not logged in) fails the session with that reason. Every step
// is a trace event appended through the SessionManager.
//
// After a restart the runner picks up where the trace stands: a turn that
// was cut off is closed (turn_end with is_error) and its orphaned agent
// process group killed, an interrupted verification is waited for again
// (the same evaluation id: re-queued by the dispatcher, or submitted again
// when it never reached the store), and the next turn resumes the agent by
// its agent_session_id.
//
// Thread-safety: Stop, Ended, WaitDone and InterruptTurn may be called from
// any thread.
#ifndef KERNELSEEK_SERVER_SESSION_RUNNER_H_
#define KERNELSEEK_SERVER_SESSION_RUNNER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kernelseek/v1/session.pb.h"
#include "server/agent/adapter.h"
#include "server/agent/agent_process.h"
#include "server/store.h"

namespace kseek::server {

class SessionManager;

class SessionRunner {
 public:
  SessionRunner(SessionManager* manager, std::string session_id);
  ~SessionRunner();  // Stop()
  SessionRunner(const SessionRunner&) = delete;
  SessionRunner& operator=(const SessionRunner&) = delete;

  void Start();
  // Stops the loop without changing the session's state (shutdown); the
  // running turn is interrupted. Waits for the thread.
  void Stop();
  // The session was ended elsewhere (cancelled): stop the agent and the loop.
  void Ended(const std::string& reason);
  // Interrupts the running turn (a human's message with `now`).
  void InterruptTurn(const std::string& reason);
  // Whether the loop has returned.
  bool done();
  // Waits until the loop has returned (after Ended or Stop); the agent's
  // process has ended and its events are traced by then.
  void WaitDone();

 private:
  void Run();
  absl::Status Loop();
  // Closes a turn cut off by a restart; appends the resume state event.
  absl::Status Recover(const SessionRecord& record);
  // Returns true when the goal was met (the session succeeded).
  absl::StatusOr<bool> Verify();
  absl::StatusOr<std::string> NextPrompt();
  absl::Status RunTurn(const std::string& prompt);
  // What of the budget is spent, if anything. `during_turn`: the running
  // turn is not counted against max_turns (it may finish).
  std::optional<std::string> BudgetSpent(const SessionRecord& record, bool during_turn) const;
  absl::Status Finish(const std::string& state, const std::string& reason);
  // The evaluation request of the workspace's kernel.cu.
  absl::StatusOr<EvaluationRecord> VerificationRecord(const SessionRecord& record,
                                                      const std::string& id);
  bool ShouldExit();

  SessionManager* const manager_;
  const std::string id_;
  kernelseek::v1::CreateSessionRequest spec_;
  std::unique_ptr<agent::AgentAdapter> adapter_;
  std::map<std::string, std::string> env_;
  std::optional<agent::AgentConfinement> confinement_;  // of every turn
  std::string brief_;
  std::string status_line_;  // the last verification, for the next prompt

  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool turn_over_ ABSL_GUARDED_BY(mu_) = false;
  std::string fatal_error_ ABSL_GUARDED_BY(mu_);  // of the current turn
  std::string turn_text_ ABSL_GUARDED_BY(mu_);    // the agent's messages this turn
  agent::AgentProcess* process_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;
};

}  // namespace kseek::server

#endif  // KERNELSEEK_SERVER_SESSION_RUNNER_H_
