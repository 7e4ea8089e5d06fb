// The scheduler: a human's message first; otherwise a bank question whose
// trigger matches a decision point, not asked within the last R questions,
// ranked by UCB1 on "a gain followed" over past sessions.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "question_bank/src/bank.h"
#include "question_bank/src/scheduler.h"

namespace kseek::question_bank {
namespace {

using ::testing::HasSubstr;
using Source = ScheduledQuestion::Source;

Bank TestBank() {
  absl::StatusOr<Bank> bank = Bank::Parse(R"({"version": 1, "questions": [
      {"id": "layer", "text": "Which layer decides this?", "category": "moving_layer",
       "triggers": ["plateau", "claimed_limit"]},
      {"id": "limit", "text": "What shows the limit is real?", "category": "rejecting_limit",
       "triggers": ["claimed_limit"]},
      {"id": "measure", "text": "Where does the time go?", "category": "questioning_measurement",
       "triggers": ["plateau"]},
      {"id": "first-error", "text": "What does the first error say?",
       "category": "verifying_assumption", "triggers": ["compile_failure_streak"]},
      {"id": "smaller-step", "text": "What is the smallest useful change?", "category": "scope",
       "triggers": ["failure_streak"]},
      {"id": "anytime", "text": "Which belief have you never tested?",
       "category": "verifying_assumption", "triggers": ["any"]},
      {"id": "turn-review", "text": "What did this turn change, and what did it not?",
       "category": "scope", "triggers": ["turn_end_no_goal"]}]})",
                                          "test bank");
  EXPECT_TRUE(bank.ok()) << bank.status();
  return *bank;
}

FiredDecisionPoint Fired(DecisionPoint p) { return {p, "because"}; }

SchedulerInput AtPlateau() {
  SchedulerInput in;
  in.decision_points = {{DecisionPoint::kPlateau, "no gain over the last 5 evaluations"}};
  return in;
}

QuestionStats Record(int64_t asked, int64_t gains) {
  QuestionStats s;
  s.asked = asked;
  s.gains_followed = gains;
  return s;
}

TEST(Scheduler, AHumansMessageGoesFirstOldestFirst) {
  Bank bank = TestBank();
  SchedulerInput in = AtPlateau();
  in.pending_human_messages = {{"alice", "Why is the second loop there at all?"},
                               {"bob", "What does the compiler report say?"}};
  ScheduledQuestion q = ChooseNextQuestion(in, bank, {}, SchedulerOptions{});
  EXPECT_EQ(q.source, Source::kHuman);
  EXPECT_EQ(q.human_message, 0u);
  EXPECT_EQ(q.text, "Why is the second loop there at all?");
  EXPECT_EQ(q.reason, "a human's message goes first: from alice (oldest of 2 waiting)");

  // A waiting message is asked even when no decision point fired.
  in.decision_points.clear();
  EXPECT_EQ(ChooseNextQuestion(in, bank, {}, SchedulerOptions{}).source, Source::kHuman);
}

TEST(Scheduler, AsksNothingWithoutADecisionPoint) {
  ScheduledQuestion q = ChooseNextQuestion(SchedulerInput{}, TestBank(), {}, SchedulerOptions{});
  EXPECT_EQ(q.source, Source::kNone);
  EXPECT_EQ(q.reason, "no decision point fired and no human message is waiting");
}

// Over many seeds (ties between never-asked questions fall differently),
// the question asked always has a trigger matching what fired, and every
// matching question is asked for some seed.
std::set<std::string> ChosenOverSeeds(const std::vector<DecisionPoint>& points) {
  Bank bank = TestBank();
  SchedulerInput in;
  for (DecisionPoint p : points) in.decision_points.push_back(Fired(p));
  std::set<std::string> chosen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    SchedulerOptions o;
    o.seed = seed;
    ScheduledQuestion q = ChooseNextQuestion(in, bank, {}, o);
    EXPECT_EQ(q.source, Source::kBank);
    chosen.insert(q.question_id);
  }
  return chosen;
}

TEST(Scheduler, AsksOnlyQuestionsWhoseTriggerMatches) {
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kPlateau}),
            (std::set<std::string>{"layer", "measure", "anytime"}));
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kClaimedLimit}),
            (std::set<std::string>{"layer", "limit", "anytime"}));
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kCompileFailureStreak}),
            (std::set<std::string>{"first-error", "smaller-step", "anytime"}));
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kCorrectnessFailureStreak}),
            (std::set<std::string>{"smaller-step", "anytime"}));
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kTurnEndNoGoal}),
            (std::set<std::string>{"anytime", "turn-review"}));
}

TEST(Scheduler, TheMostSpecificFiredPointDecides) {
  // A turn that ends with a claimed limit is asked about the limit.
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kTurnEndNoGoal, DecisionPoint::kClaimedLimit}),
            (std::set<std::string>{"layer", "limit", "anytime"}));
  EXPECT_EQ(ChosenOverSeeds({DecisionPoint::kTurnEndNoGoal, DecisionPoint::kPlateau}),
            (std::set<std::string>{"layer", "measure", "anytime"}));
}

TEST(Scheduler, TheNextFiredPointDecidesWhenTheFirstHasNoQuestionLeft) {
  Bank bank = TestBank();
  SchedulerInput in;
  in.decision_points = {Fired(DecisionPoint::kTurnEndNoGoal), Fired(DecisionPoint::kClaimedLimit)};
  in.asked_this_session = {"layer", "limit", "anytime"};
  ScheduledQuestion q = ChooseNextQuestion(in, bank, {}, SchedulerOptions{});
  EXPECT_EQ(q.source, Source::kBank);
  EXPECT_EQ(q.question_id, "turn-review");
  EXPECT_THAT(q.reason, HasSubstr("For turn_end_no_goal"));
}

TEST(Scheduler, SameInputAndSeedGiveTheSameQuestion) {
  Bank bank = TestBank();
  std::map<std::string, QuestionStats> stats = {{"layer", Record(4, 1)}, {"measure", Record(4, 1)}};
  for (uint64_t seed : {1u, 7u, 12345u}) {
    SchedulerOptions o;
    o.seed = seed;
    ScheduledQuestion a = ChooseNextQuestion(AtPlateau(), bank, stats, o);
    ScheduledQuestion b = ChooseNextQuestion(AtPlateau(), bank, stats, o);
    EXPECT_EQ(a.question_id, b.question_id);
    EXPECT_EQ(a.reason, b.reason);
  }
}

TEST(Scheduler, NeverRepeatsAQuestionWithinTheLastRQuestions) {
  Bank bank = TestBank();
  // "layer" has by far the best record, yet was just asked.
  std::map<std::string, QuestionStats> stats = {
      {"layer", Record(50, 40)}, {"measure", Record(50, 5)}, {"anytime", Record(50, 1)}};
  SchedulerOptions o;
  o.no_repeat_within = 2;
  SchedulerInput in = AtPlateau();
  in.asked_this_session = {"layer", "measure"};
  ScheduledQuestion q = ChooseNextQuestion(in, bank, stats, o);
  EXPECT_EQ(q.question_id, "anytime");
  EXPECT_THAT(q.reason, HasSubstr("the best of 1 candidate(s), 2 of 3 matching plateau left out as asked within the last 2"));

  // A human's question counts towards R: "layer" is now three questions back.
  in.asked_this_session = {"layer", "measure", ""};
  EXPECT_EQ(ChooseNextQuestion(in, bank, stats, o).question_id, "layer");

  // Every matching question asked recently: nothing is asked, and why.
  o.no_repeat_within = 3;
  in.asked_this_session = {"measure", "anytime", "layer"};
  q = ChooseNextQuestion(in, bank, stats, o);
  EXPECT_EQ(q.source, Source::kNone);
  EXPECT_THAT(q.reason, HasSubstr("(3) was asked within the last 3 questions"));
}

TEST(Scheduler, ASessionOfPlateausCyclesWithoutRepeatsInsideTheWindow) {
  Bank bank = TestBank();
  std::map<std::string, QuestionStats> stats = {
      {"layer", Record(30, 12)}, {"measure", Record(30, 3)}, {"anytime", Record(2, 0)}};
  SchedulerOptions o;
  o.no_repeat_within = 2;
  SchedulerInput in = AtPlateau();
  for (int i = 0; i < 12; ++i) {
    ScheduledQuestion q = ChooseNextQuestion(in, bank, stats, o);
    ASSERT_EQ(q.source, Source::kBank) << q.reason;
    size_t n = in.asked_this_session.size();
    for (size_t back = 1; back <= 2 && back <= n; ++back)
      EXPECT_NE(q.question_id, in.asked_this_session[n - back]) << "ask " << i;
    in.asked_this_session.push_back(q.question_id);
  }
}

TEST(Scheduler, PrefersTheQuestionWithTheBetterGainRecord) {
  Bank bank = TestBank();
  // Asked equally often; "measure" was followed by gains far more often.
  std::map<std::string, QuestionStats> stats = {
      {"layer", Record(10, 1)}, {"measure", Record(10, 6)}, {"anytime", Record(10, 2)}};
  ScheduledQuestion q = ChooseNextQuestion(AtPlateau(), bank, stats, SchedulerOptions{});
  EXPECT_EQ(q.question_id, "measure");
  EXPECT_THAT(q.reason, HasSubstr("fired: plateau (no gain over the last 5 evaluations). For plateau, asked 'measure'"));
  EXPECT_THAT(q.reason, HasSubstr("'measure' (questioning_measurement; triggers plateau)"));
  EXPECT_THAT(q.reason, HasSubstr("followed by a gain 6 of 10 times asked before"));

  // A question that keeps helping beats one that keeps failing even when the
  // failing one was asked less.
  stats = {{"layer", Record(100, 60)}, {"measure", Record(20, 0)}, {"anytime", Record(100, 10)}};
  EXPECT_EQ(ChooseNextQuestion(AtPlateau(), bank, stats, SchedulerOptions{}).question_id, "layer");
}

TEST(Scheduler, StillExploresAQuestionNeverAsked) {
  Bank bank = TestBank();
  // "anytime" has no record at all; "measure" has a good one.
  std::map<std::string, QuestionStats> stats = {{"layer", Record(10, 1)},
                                                {"measure", Record(10, 6)}};
  ScheduledQuestion q = ChooseNextQuestion(AtPlateau(), bank, stats, SchedulerOptions{});
  EXPECT_EQ(q.question_id, "anytime");
  EXPECT_THAT(q.reason, HasSubstr("(verifying_assumption; triggers any): never asked before"));

  // With exploration switched off the record alone decides.
  SchedulerOptions greedy;
  greedy.exploration = 0.0;
  EXPECT_EQ(ChooseNextQuestion(AtPlateau(), bank, stats, greedy).question_id, "measure");
}

TEST(RankQuestions, ScoreIsMeanPlusBonusBestFirst) {
  Bank bank = TestBank();
  std::map<std::string, QuestionStats> stats = {{"layer", Record(10, 1)},
                                                {"measure", Record(10, 6)}};
  std::vector<RankedQuestion> ranked =
      RankQuestions(bank.Matching({DecisionPoint::kPlateau}), bank, stats, SchedulerOptions{});
  ASSERT_EQ(ranked.size(), 3u);
  // Pooled rate p = (7 + 1) / (20 + 2); w = 2; T = 20.
  double p = 8.0 / 22.0;
  EXPECT_EQ(ranked[1].question->id, "measure");
  EXPECT_NEAR(ranked[1].mean, (6 + 2 * p) / 12.0, 1e-12);
  EXPECT_NEAR(ranked[1].bonus, std::sqrt(std::log(21.0) / 11.0), 1e-12);
  EXPECT_EQ(ranked[0].question->id, "anytime");
  EXPECT_NEAR(ranked[0].mean, p, 1e-12);
  EXPECT_NEAR(ranked[0].bonus, std::sqrt(std::log(21.0)), 1e-12);
  EXPECT_EQ(ranked[2].question->id, "layer");
  for (const RankedQuestion& r : ranked) EXPECT_NEAR(r.score, r.mean + r.bonus, 1e-12);
}

}  // namespace
}  // namespace kseek::question_bank
