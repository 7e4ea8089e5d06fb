// Decision points: the moments at which the scheduler may ask a question,
// found from a session's history by pure functions (thread-safe, no state).
//
// Only what happened at or after `since` (normally: when the last question
// was asked) can fire a decision point, so one stall gets one question and
// the agent gets room to act on it; evaluations before `since` still count
// as the best speedup to beat. The rules, with N, epsilon and k from
// DecisionPointOptions:
//   plateau                     the last N evaluations are all at or after
//                               `since`, and the best correct speedup among
//                               them is not >= (1 + epsilon) x the best before
//                               them (none correct among them: no gain; none
//                               correct before them but one among them: a gain)
//   failure_streak              the last k evaluations (at or after `since`)
//                               are all not correct, for any reason
//   compile_failure_streak      ... all did not compile (or failed the policy)
//   correctness_failure_streak  ... all compiled and were not correct
//   claimed_limit               an agent message at or after `since` claims
//                               a limit (claimed_limit.h)
//   turn_end_no_goal            given by the caller: the agent's turn ended and
//                               the harness's verification did not meet the goal
// A waiting human message is a decision point too; the scheduler takes
// those directly (scheduler.h).
#ifndef KERNELSEEK_QUESTION_BANK_DECISION_POINTS_H_
#define KERNELSEEK_QUESTION_BANK_DECISION_POINTS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"

#include "question_bank/src/question.h"
#include "question_bank/src/session_history.h"

namespace kseek::question_bank {

struct DecisionPointOptions {
  int plateau_window = 5;       // N evaluations
  double min_gain = 0.02;       // epsilon: relative improvement of the best speedup
  int failure_streak = 3;       // k evaluations
};

// A decision point that fired, with a sentence saying why (for the trace and
// the scheduler's reason), e.g. "no gain of at least 2% over the last 5
// evaluations (best 1.31x before them, 1.30x among them)".
struct FiredDecisionPoint {
  DecisionPoint point;
  std::string detail;
};

// The rules above, one at a time. `evaluations` are ordered by index.
bool IsPlateau(const std::vector<Evaluation>& evaluations, const DecisionPointOptions& options,
               absl::Time since = absl::InfinitePast());
// How many evaluations at the end, all at or after `since`, did not compile
// / compiled but were not correct / were not correct.
int CompileFailureRun(const std::vector<Evaluation>& evaluations,
                      absl::Time since = absl::InfinitePast());
int CorrectnessFailureRun(const std::vector<Evaluation>& evaluations,
                          absl::Time since = absl::InfinitePast());
int FailureRun(const std::vector<Evaluation>& evaluations,
               absl::Time since = absl::InfinitePast());

// Every decision point that fires now, in the order of the DecisionPoint
// enum (turn_end_no_goal first).
std::vector<FiredDecisionPoint> DetectDecisionPoints(const SessionHistory& history,
                                                     const DecisionPointOptions& options,
                                                     absl::Time since,
                                                     bool turn_ended_without_goal);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_DECISION_POINTS_H_
