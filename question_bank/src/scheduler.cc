#include "question_bank/src/scheduler.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kseek::question_bank {
namespace {

// Decision points from the most specific to the least: when several fire,
// the question answers the first of them that has a candidate.
constexpr DecisionPoint kSpecificFirst[] = {
    DecisionPoint::kClaimedLimit,          DecisionPoint::kCompileFailureStreak,
    DecisionPoint::kCorrectnessFailureStreak, DecisionPoint::kFailureStreak,
    DecisionPoint::kPlateau,               DecisionPoint::kTurnEndNoGoal,
};

// Scores closer than this are equal and ordered by the seeded hash.
constexpr double kScoreTolerance = 1e-12;

// FNV-1a, then a splitmix64 finaliser: stable across platforms and runs.
uint64_t TieKey(uint64_t seed, absl::string_view id) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

const QuestionStats& StatsOf(const std::map<std::string, QuestionStats>& stats,
                             const std::string& id) {
  static const QuestionStats* never_asked = new QuestionStats;
  auto it = stats.find(id);
  return it == stats.end() ? *never_asked : it->second;
}

std::string Record(const QuestionStats& s) {
  if (s.asked == 0) return "never asked before";
  return absl::StrCat("followed by a gain ", s.gains_followed, " of ", s.asked,
                      s.asked == 1 ? " time asked before" : " times asked before");
}

std::string FiredNames(const std::vector<FiredDecisionPoint>& fired) {
  std::vector<std::string> parts;
  for (const FiredDecisionPoint& f : fired)
    parts.push_back(absl::StrCat(DecisionPointName(f.point), " (", f.detail, ")"));
  return absl::StrJoin(parts, "; ");
}

std::string TriggerNames(const Question& q) {
  std::vector<absl::string_view> names;
  for (Trigger t : q.triggers) names.push_back(TriggerName(t));
  return absl::StrJoin(names, ", ");
}

}  // namespace

std::vector<RankedQuestion> RankQuestions(const std::vector<const Question*>& candidates,
                                          const Bank& bank,
                                          const std::map<std::string, QuestionStats>& stats,
                                          const SchedulerOptions& options) {
  double total_asked = 0, total_gains = 0;
  for (const Question& q : bank.questions()) {
    const QuestionStats& s = StatsOf(stats, q.id);
    total_asked += static_cast<double>(s.asked);
    total_gains += static_cast<double>(s.gains_followed);
  }
  double prior_mean = (total_gains + 1.0) / (total_asked + 2.0);
  double w = std::max(options.prior_weight, 0.0);

  std::vector<RankedQuestion> ranked;
  for (const Question* q : candidates) {
    const QuestionStats& s = StatsOf(stats, q->id);
    double n = static_cast<double>(s.asked);
    RankedQuestion r;
    r.question = q;
    r.mean = n + w > 0 ? (static_cast<double>(s.gains_followed) + w * prior_mean) / (n + w)
                       : prior_mean;
    r.bonus = options.exploration * std::sqrt(std::log(total_asked + 1.0) / (n + 1.0));
    r.score = r.mean + r.bonus;
    ranked.push_back(r);
  }
  std::sort(ranked.begin(), ranked.end(), [&](const RankedQuestion& a, const RankedQuestion& b) {
    if (std::abs(a.score - b.score) > kScoreTolerance) return a.score > b.score;
    return TieKey(options.seed, a.question->id) < TieKey(options.seed, b.question->id);
  });
  return ranked;
}

ScheduledQuestion ChooseNextQuestion(const SchedulerInput& input, const Bank& bank,
                                     const std::map<std::string, QuestionStats>& stats,
                                     const SchedulerOptions& options) {
  ScheduledQuestion out;
  if (!input.pending_human_messages.empty()) {
    const HumanMessage& m = input.pending_human_messages.front();
    out.source = ScheduledQuestion::Source::kHuman;
    out.text = m.text;
    out.human_message = 0;
    out.reason = absl::StrCat("a human's message goes first: from ",
                              m.author.empty() ? "an unnamed user" : m.author, " (oldest of ",
                              input.pending_human_messages.size(), " waiting)");
    return out;
  }
  if (input.decision_points.empty()) {
    out.reason = "no decision point fired and no human message is waiting";
    return out;
  }

  size_t r = static_cast<size_t>(std::max(options.no_repeat_within, 0));
  const std::vector<std::string>& asked = input.asked_this_session;
  std::set<std::string> recent(asked.end() - static_cast<std::ptrdiff_t>(std::min(r, asked.size())),
                               asked.end());
  auto not_recent = [&](const std::vector<const Question*>& questions) {
    std::vector<const Question*> out;
    for (const Question* q : questions)
      if (!recent.count(q->id)) out.push_back(q);
    return out;
  };

  // The most specific fired point that still has a candidate decides.
  std::vector<DecisionPoint> points;
  for (const FiredDecisionPoint& f : input.decision_points) points.push_back(f.point);
  std::vector<const Question*> matching = bank.Matching(points);
  std::vector<const Question*> candidates;
  std::string focus;
  for (DecisionPoint p : kSpecificFirst) {
    if (std::find(points.begin(), points.end(), p) == points.end()) continue;
    candidates = not_recent(bank.Matching({p}));
    if (!candidates.empty()) {
      focus = std::string(DecisionPointName(p));
      break;
    }
  }

  std::string fired = FiredNames(input.decision_points);
  if (matching.empty()) {
    out.reason = absl::StrCat("no bank question matches ", fired);
    return out;
  }
  if (candidates.empty()) {
    out.reason = absl::StrCat("every question matching ", fired, " (", matching.size(),
                              ") was asked within the last ", r, " questions");
    return out;
  }

  size_t in_focus = 0;
  for (DecisionPoint p : kSpecificFirst)
    if (focus == DecisionPointName(p)) in_focus = bank.Matching({p}).size();
  std::vector<RankedQuestion> ranked = RankQuestions(candidates, bank, stats, options);
  const RankedQuestion& best = ranked.front();
  const Question& q = *best.question;
  out.source = ScheduledQuestion::Source::kBank;
  out.text = q.text;
  out.question_id = q.id;
  out.reason = absl::StrFormat(
      "fired: %s. For %s, asked '%s' (%s; triggers %s): %s; score %.3f = gain rate %.3f + "
      "exploration %.3f; the best of %d candidate(s), %d of %d matching %s left out as asked "
      "within the last %d",
      fired, focus, q.id, std::string(CategoryName(q.category)), TriggerNames(q),
      Record(StatsOf(stats, q.id)), best.score, best.mean, best.bonus,
      static_cast<int>(candidates.size()), static_cast<int>(in_focus - candidates.size()),
      static_cast<int>(in_focus), focus, static_cast<int>(r));
  return out;
}

}  // namespace kseek::question_bank
