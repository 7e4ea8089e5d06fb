// A bank question and the vocabulary it is written in: its category, the
// triggers that make it eligible, and the decision points that fire them.
//
// A Question is a plain value: copyable, safe to share between threads once
// built. The names below ("moving_layer", "plateau", ...) are the spellings
// used in bank.json, in traces and on the command line.
#ifndef KERNELSEEK_QUESTION_BANK_QUESTION_H_
#define KERNELSEEK_QUESTION_BANK_QUESTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kseek::question_bank {

// What kind of attention a question directs.
enum class Category {
  kMovingLayer,               // "moving_layer": look at a different layer of the system
  kRejectingLimit,            // "rejecting_limit": doubt a limit the agent claimed
  kQuestioningMeasurement,    // "questioning_measurement": doubt what a number says
  kVerifyingAssumption,       // "verifying_assumption": test a belief acted on
  kFirstPrinciples,           // "first_principles": reason from the work itself
  kScope,                     // "scope": size and direction of the next step
};

// A moment in a session at which the scheduler may ask a bank question.
// Detection is in decision_points.h; a waiting human message is also a
// decision point, but it is answered by the human's text, never by the bank.
enum class DecisionPoint {
  kTurnEndNoGoal,             // "turn_end_no_goal": a turn ended, goal not verified
  kPlateau,                   // "plateau": no gain over the last N evaluations
  kClaimedLimit,              // "claimed_limit": the agent said a limit was reached
  kFailureStreak,             // "failure_streak": the last k evaluations all failed
  kCompileFailureStreak,      // "compile_failure_streak": ... all failed to compile
  kCorrectnessFailureStreak,  // "correctness_failure_streak": ... compiled, all wrong
};

// When a question is eligible: a decision point by name, or kAny.
enum class Trigger {
  kTurnEndNoGoal,
  kPlateau,
  kClaimedLimit,
  kFailureStreak,             // matches every kind of failure streak
  kCompileFailureStreak,
  kCorrectnessFailureStreak,
  kAny,                       // "any": matches every decision point
};

absl::string_view CategoryName(Category c);
absl::string_view DecisionPointName(DecisionPoint p);
absl::string_view TriggerName(Trigger t);
// Parse the names above; the error lists the accepted names.
absl::StatusOr<Category> ParseCategory(absl::string_view name);
absl::StatusOr<DecisionPoint> ParseDecisionPoint(absl::string_view name);
absl::StatusOr<Trigger> ParseTrigger(absl::string_view name);

// Every value, in declaration order (for listings and validation).
const std::vector<Category>& AllCategories();
const std::vector<Trigger>& AllTriggers();

// True when `trigger` makes a question eligible at `point`: the same name,
// kAny, or kFailureStreak at either specific failure streak.
bool TriggerMatches(Trigger trigger, DecisionPoint point);

struct Question {
  std::string id;    // stable slug, e.g. "layer-below-decides"; never reused
  std::string text;  // one short question, shown to the agent verbatim
  Category category = Category::kMovingLayer;
  std::vector<Trigger> triggers;  // at least one, no repeats

  // True when any trigger matches any of `points`.
  bool MatchesAny(const std::vector<DecisionPoint>& points) const;
};

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_QUESTION_H_
