#include "question_bank/src/question.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kseek::question_bank {
namespace {

template <typename Enum>
using NameTable = std::vector<std::pair<Enum, absl::string_view>>;

const NameTable<Category>& CategoryNames() {
  static const auto* names = new NameTable<Category>{
      {Category::kMovingLayer, "moving_layer"},
      {Category::kRejectingLimit, "rejecting_limit"},
      {Category::kQuestioningMeasurement, "questioning_measurement"},
      {Category::kVerifyingAssumption, "verifying_assumption"},
      {Category::kFirstPrinciples, "first_principles"},
      {Category::kScope, "scope"},
  };
  return *names;
}

const NameTable<DecisionPoint>& DecisionPointNames() {
  static const auto* names = new NameTable<DecisionPoint>{
      {DecisionPoint::kTurnEndNoGoal, "turn_end_no_goal"},
      {DecisionPoint::kPlateau, "plateau"},
      {DecisionPoint::kClaimedLimit, "claimed_limit"},
      {DecisionPoint::kFailureStreak, "failure_streak"},
      {DecisionPoint::kCompileFailureStreak, "compile_failure_streak"},
      {DecisionPoint::kCorrectnessFailureStreak, "correctness_failure_streak"},
  };
  return *names;
}

const NameTable<Trigger>& TriggerNames() {
  static const auto* names = new NameTable<Trigger>{
      {Trigger::kTurnEndNoGoal, "turn_end_no_goal"},
      {Trigger::kPlateau, "plateau"},
      {Trigger::kClaimedLimit, "claimed_limit"},
      {Trigger::kFailureStreak, "failure_streak"},
      {Trigger::kCompileFailureStreak, "compile_failure_streak"},
      {Trigger::kCorrectnessFailureStreak, "correctness_failure_streak"},
      {Trigger::kAny, "any"},
  };
  return *names;
}

template <typename Enum>
absl::string_view NameOf(const NameTable<Enum>& table, Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename Enum>
absl::StatusOr<Enum> Parse(const NameTable<Enum>& table, absl::string_view what,
                           absl::string_view name) {
  std::vector<absl::string_view> known;
  for (const auto& [v, n] : table) {
    if (n == name) return v;
    known.push_back(n);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " '", name,
                                                 "' (expected one of: ",
                                                 absl::StrJoin(known, ", "), ")"));
}

}  // namespace

absl::string_view CategoryName(Category c) { return NameOf(CategoryNames(), c); }
absl::string_view DecisionPointName(DecisionPoint p) { return NameOf(DecisionPointNames(), p); }
absl::string_view TriggerName(Trigger t) { return NameOf(TriggerNames(), t); }

absl::StatusOr<Category> ParseCategory(absl::string_view name) {
  return Parse(CategoryNames(), "category", name);
}
absl::StatusOr<DecisionPoint> ParseDecisionPoint(absl::string_view name) {
  return Parse(DecisionPointNames(), "decision point", name);
}
absl::StatusOr<Trigger> ParseTrigger(absl::string_view name) {
  return Parse(TriggerNames(), "trigger", name);
}

const std::vector<Category>& AllCategories() {
  static const auto* all = [] {
    auto* v = new std::vector<Category>;
    for (const auto& [c, name] : CategoryNames()) v->push_back(c);
    return v;
  }();
  return *all;
}

const std::vector<Trigger>& AllTriggers() {
  static const auto* all = [] {
    auto* v = new std::vector<Trigger>;
    for (const auto& [t, name] : TriggerNames()) v->push_back(t);
    return v;
  }();
  return *all;
}

bool TriggerMatches(Trigger trigger, DecisionPoint point) {
  switch (trigger) {
    case Trigger::kAny:
      return true;
    case Trigger::kFailureStreak:
      return point == DecisionPoint::kFailureStreak ||
             point == DecisionPoint::kCompileFailureStreak ||
             point == DecisionPoint::kCorrectnessFailureStreak;
    case Trigger::kTurnEndNoGoal:
      return point == DecisionPoint::kTurnEndNoGoal;
    case Trigger::kPlateau:
      return point == DecisionPoint::kPlateau;
    case Trigger::kClaimedLimit:
      return point == DecisionPoint::kClaimedLimit;
    case Trigger::kCompileFailureStreak:
      return point == DecisionPoint::kCompileFailureStreak;
    case Trigger::kCorrectnessFailureStreak:
      return point == DecisionPoint::kCorrectnessFailureStreak;
  }
  return false;
}

bool Question::MatchesAny(const std::vector<DecisionPoint>& points) const {
  for (Trigger t : triggers)
    for (DecisionPoint p : points)
      if (TriggerMatches(t, p)) return true;
  return false;
}

}  // namespace kseek::question_bank
