#include "question_bank/src/decision_points.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "question_bank/src/claimed_limit.h"

namespace kseek::question_bank {
namespace {

// The best correct speedup of evaluations [begin, end) of the vector.
std::optional<double> BestIn(const std::vector<Evaluation>& evaluations, size_t begin,
                             size_t end) {
  std::optional<double> best;
  for (size_t i = begin; i < end; ++i) {
    const Evaluation& e = evaluations[i];
    if (e.correct) best = best ? std::max(*best, e.speedup) : e.speedup;
  }
  return best;
}

int TrailingRun(const std::vector<Evaluation>& evaluations, absl::Time since,
                const std::function<bool(const Evaluation&)>& counts) {
  int run = 0;
  for (auto it = evaluations.rbegin(); it != evaluations.rend(); ++it) {
    if (it->time < since || !counts(*it)) break;
    ++run;
  }
  return run;
}

std::string Speedup(const std::optional<double>& s) {
  return s ? absl::StrFormat("%.2fx", *s) : std::string("none correct");
}

}  // namespace

bool IsPlateau(const std::vector<Evaluation>& evaluations, const DecisionPointOptions& options,
               absl::Time since) {
  size_t n = static_cast<size_t>(std::max(options.plateau_window, 1));
  if (evaluations.size() < n) return false;
  size_t window_begin = evaluations.size() - n;
  if (evaluations[window_begin].time < since) return false;
  std::optional<double> before = BestIn(evaluations, 0, window_begin);
  std::optional<double> among = BestIn(evaluations, window_begin, evaluations.size());
  if (!among) return true;
  if (!before) return false;
  return *among < *before * (1.0 + options.min_gain);
}

int CompileFailureRun(const std::vector<Evaluation>& evaluations, absl::Time since) {
  return TrailingRun(evaluations, since, [](const Evaluation& e) { return !e.compiled; });
}

int CorrectnessFailureRun(const std::vector<Evaluation>& evaluations, absl::Time since) {
  return TrailingRun(evaluations, since,
                     [](const Evaluation& e) { return e.compiled && !e.correct; });
}

int FailureRun(const std::vector<Evaluation>& evaluations, absl::Time since) {
  return TrailingRun(evaluations, since, [](const Evaluation& e) { return !e.correct; });
}

std::vector<FiredDecisionPoint> DetectDecisionPoints(const SessionHistory& history,
                                                     const DecisionPointOptions& options,
                                                     absl::Time since,
                                                     bool turn_ended_without_goal) {
  const std::vector<Evaluation>& evals = history.evaluations;
  std::vector<FiredDecisionPoint> fired;
  if (turn_ended_without_goal)
    fired.push_back({DecisionPoint::kTurnEndNoGoal,
                     "the agent's turn ended and the goal was not verified"});

  if (IsPlateau(evals, options, since)) {
    size_t window_begin = evals.size() - static_cast<size_t>(std::max(options.plateau_window, 1));
    fired.push_back(
        {DecisionPoint::kPlateau,
         absl::StrFormat("no gain of at least %g%% over the last %d evaluations (best %s before "
                         "them, %s among them)",
                         options.min_gain * 100.0, options.plateau_window,
                         Speedup(BestIn(evals, 0, window_begin)),
                         Speedup(BestIn(evals, window_begin, evals.size())))});
  }

  for (const AgentMessage& m : history.agent_messages) {
    if (m.time < since) continue;
    if (std::optional<LimitClaim> claim = FindClaimedLimit(m.text)) {
      fired.push_back({DecisionPoint::kClaimedLimit,
                       absl::StrCat("the agent claimed a limit (", claim->pattern, "): \"",
                                    claim->clause, "\"")});
      break;
    }
  }

  int k = std::max(options.failure_streak, 1);
  if (int run = FailureRun(evals, since); run >= k)
    fired.push_back({DecisionPoint::kFailureStreak,
                     absl::StrCat("the last ", run, " evaluations were not correct")});
  if (int run = CompileFailureRun(evals, since); run >= k)
    fired.push_back({DecisionPoint::kCompileFailureStreak,
                     absl::StrCat("the last ", run, " evaluations did not compile")});
  if (int run = CorrectnessFailureRun(evals, since); run >= k)
    fired.push_back({DecisionPoint::kCorrectnessFailureStreak,
                     absl::StrCat("the last ", run, " evaluations compiled but were wrong")});
  return fired;
}

}  // namespace kseek::question_bank
