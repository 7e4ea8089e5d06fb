// The question bank: bank.json loading and validation, the question-text
// rule, trigger matching, decision points (plateau, failure streaks, claimed
// limits), question statistics and the self-ask marker.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "question_bank/src/bank.h"
#include "question_bank/src/claimed_limit.h"
#include "question_bank/src/decision_points.h"
#include "question_bank/src/question_text.h"
#include "question_bank/src/self_ask.h"
#include "question_bank/src/stats.h"
#include "tests/test_util.h"

namespace kseek::question_bank {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string ShippedBankPath() { return kseek::testing::SourceDir() + "/question_bank/bank.json"; }

// A bank.json text whose second entry is `entry`.
std::string BankWithSecondEntry(const std::string& entry) {
  return R"({"version": 1, "questions": [
    {"id": "first-one", "text": "Where does the time go?", "category": "scope",
     "triggers": ["plateau"]},
    )" + entry + "]}";
}

std::string ErrorOf(const std::string& bank_json) {
  absl::StatusOr<Bank> bank = Bank::Parse(bank_json, "bank.json");
  EXPECT_FALSE(bank.ok()) << "accepted: " << bank_json;
  return bank.ok() ? "" : std::string(bank.status().message());
}

// --- The shipped bank -------------------------------------------------------

TEST(ShippedBank, LoadsAndValidates) {
  absl::StatusOr<Bank> bank = Bank::Load(ShippedBankPath());
  ASSERT_TRUE(bank.ok()) << bank.status();
  EXPECT_GE(bank->questions().size(), 30u);
}

TEST(ShippedBank, CoversEveryCategoryAndEveryDecisionPoint) {
  absl::StatusOr<Bank> bank = Bank::Load(ShippedBankPath());
  ASSERT_TRUE(bank.ok()) << bank.status();
  for (Category c : AllCategories()) {
    int n = 0;
    for (const Question& q : bank->questions()) n += q.category == c;
    EXPECT_GE(n, 3) << CategoryName(c);
  }
  for (DecisionPoint p :
       {DecisionPoint::kTurnEndNoGoal, DecisionPoint::kPlateau, DecisionPoint::kClaimedLimit,
        DecisionPoint::kFailureStreak, DecisionPoint::kCompileFailureStreak,
        DecisionPoint::kCorrectnessFailureStreak}) {
    EXPECT_GE(bank->Matching({p}).size(), 3u) << DecisionPointName(p);
  }
}

TEST(ShippedBank, IsKeptInTheCanonicalLayout) {
  absl::StatusOr<Bank> bank = Bank::Load(ShippedBankPath());
  ASSERT_TRUE(bank.ok()) << bank.status();
  EXPECT_EQ(bank->ToJsonText(), kseek::testing::ReadFile(ShippedBankPath()));
}

TEST(Bank, MissingFileIsNotFoundAndNamed) {
  absl::StatusOr<Bank> bank = Bank::Load("/nonexistent/bank.json");
  EXPECT_EQ(bank.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(bank.status().message(), HasSubstr("/nonexistent/bank.json"));
}

// --- Every bad bank is refused, naming the entry ----------------------------

TEST(BadBank, UnknownCategory) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "x", "text": "Why?", "category": "foo", "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'x'): unknown category 'foo' (expected one of: "
            "moving_layer, rejecting_limit, questioning_measurement, verifying_assumption, "
            "first_principles, scope)");
}

TEST(BadBank, UnknownTrigger) {
  EXPECT_THAT(ErrorOf(BankWithSecondEntry(
                  R"({"id": "x", "text": "Why?", "category": "scope",
                      "triggers": ["plateau", "slow"]})")),
              HasSubstr("bank.json: questions[1] (id 'x'): triggers[1]: unknown trigger 'slow'"));
}

TEST(BadBank, DuplicateId) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "first-one", "text": "Why now?", "category": "scope",
                    "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'first-one'): duplicate id (also questions[0])");
}

TEST(BadBank, SameTextTwice) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "again", "text": "where does the time go?", "category": "scope",
                    "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'again'): same text as questions[0]");
}

TEST(BadBank, EmptyText) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "x", "text": "", "category": "scope", "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'x'): text is empty");
}

TEST(BadBank, TextThatSuppliesATechnique) {
  EXPECT_THAT(ErrorOf(BankWithSecondEntry(
                  R"({"id": "x", "text": "Could the loads go through TMA instead?",
                      "category": "moving_layer", "triggers": ["plateau"]})")),
              HasSubstr("bank.json: questions[1] (id 'x'): text names 'tma'"));
}

TEST(BadBank, TextThatSuppliesANumber) {
  EXPECT_THAT(ErrorOf(BankWithSecondEntry(
                  R"({"id": "x", "text": "Would a block of 128 threads be faster?",
                      "category": "scope", "triggers": ["plateau"]})")),
              HasSubstr("bank.json: questions[1] (id 'x'): text contains the digit '1'"));
}

TEST(BadBank, TextTooLong) {
  std::string text(kMaxQuestionChars, 'a');
  text.back() = '?';
  ASSERT_TRUE(CheckQuestionText(text).ok());
  text.insert(0, "a");
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(R"({"id": "x", "text": ")" + text +
                                        R"(", "category": "scope", "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'x'): text is 121 characters long (at most 120)");
}

TEST(BadBank, IdThatIsNotASlug) {
  EXPECT_THAT(ErrorOf(BankWithSecondEntry(
                  R"({"id": "Bad Id", "text": "Why?", "category": "scope", "triggers": ["any"]})")),
              HasSubstr("bank.json: questions[1]: id 'Bad Id' is not a slug"));
}

TEST(BadBank, NoTriggersOrRepeatedTrigger) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "x", "text": "Why?", "category": "scope", "triggers": []})")),
            "bank.json: questions[1] (id 'x'): triggers: at least one trigger is needed");
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(
                R"({"id": "x", "text": "Why?", "category": "scope",
                    "triggers": ["plateau", "plateau"]})")),
            "bank.json: questions[1] (id 'x'): triggers[1]: 'plateau' is listed twice");
}

TEST(BadBank, MissingOrUnknownFields) {
  EXPECT_EQ(ErrorOf(BankWithSecondEntry(R"({"id": "x", "category": "scope", "triggers": ["any"]})")),
            "bank.json: questions[1] (id 'x'): text: missing");
  EXPECT_THAT(ErrorOf(BankWithSecondEntry(
                  R"({"id": "x", "text": "Why?", "category": "scope", "triggers": ["any"],
                      "answer": "use more threads"})")),
              HasSubstr("bank.json: questions[1] (id 'x'): answer: unknown field"));
  EXPECT_THAT(ErrorOf(R"({"version": 2, "questions": []})"),
              HasSubstr("bank.json: version: 2 is not supported"));
  EXPECT_THAT(ErrorOf(R"({"version": 1, "questions": [}")"), HasSubstr("bank.json: not valid JSON"));
}

// --- The question-text rule -------------------------------------------------

TEST(QuestionText, AcceptsQuestionsThatOnlyDirectAttention) {
  for (const char* text : {"Which layer below the one you are changing decides this time?",
                           "What would have to be true for that limit to be real?",
                           "Where exactly does the time go, and how do you know?"}) {
    EXPECT_TRUE(CheckQuestionText(text).ok()) << text << ": " << CheckQuestionText(text);
  }
}

TEST(QuestionText, RefusesTechniquesUnitsToolsAndSuggestions) {
  struct Case {
    const char* text;
    const char* term;
  };
  for (const Case& c : std::vector<Case>{
           {"Are the tensor cores busy?", "tensor core*"},
           {"Is cp.async used everywhere?", "cp async"},
           {"Could the shared memory layout be swizzled?", "swizzl*"},
           {"Would split-K help here?", "split k"},
           {"Is occupancy the problem?", "occupancy"},
           {"What does the SASS say?", "sass"},
           {"Have you tried doing less work?", "have you tried"},
           {"Why not launch fewer blocks?", "why not"},
       }) {
    absl::Status s = CheckQuestionText(c.text);
    EXPECT_THAT(s.message(), HasSubstr(std::string("names '") + c.term + "'")) << c.text;
  }
}

TEST(QuestionText, MustBeOneQuestion) {
  EXPECT_THAT(CheckQuestionText("Look at the memory traffic.").message(), HasSubstr("one question"));
  EXPECT_THAT(CheckQuestionText("Why? And why now?").message(), HasSubstr("one question"));
  EXPECT_THAT(CheckQuestionText("Why\nnow?").message(), HasSubstr("one line"));
  EXPECT_THAT(CheckQuestionText(" Why?").message(), HasSubstr("white space"));
}

// --- Triggers ---------------------------------------------------------------

TEST(Triggers, MatchTheirDecisionPointAnyMatchesAllFailureStreakMatchesEveryStreak) {
  EXPECT_TRUE(TriggerMatches(Trigger::kPlateau, DecisionPoint::kPlateau));
  EXPECT_FALSE(TriggerMatches(Trigger::kPlateau, DecisionPoint::kClaimedLimit));
  EXPECT_FALSE(TriggerMatches(Trigger::kCompileFailureStreak,
                              DecisionPoint::kCorrectnessFailureStreak));
  EXPECT_TRUE(TriggerMatches(Trigger::kFailureStreak, DecisionPoint::kCompileFailureStreak));
  EXPECT_TRUE(TriggerMatches(Trigger::kFailureStreak, DecisionPoint::kCorrectnessFailureStreak));
  EXPECT_FALSE(TriggerMatches(Trigger::kFailureStreak, DecisionPoint::kPlateau));
  EXPECT_TRUE(TriggerMatches(Trigger::kAny, DecisionPoint::kTurnEndNoGoal));
}

TEST(Triggers, BankMatchingKeepsFileOrder) {
  absl::StatusOr<Bank> bank = Bank::Parse(R"({"version": 1, "questions": [
      {"id": "a", "text": "A?", "category": "scope", "triggers": ["plateau"]},
      {"id": "b", "text": "B?", "category": "scope", "triggers": ["compile_failure_streak"]},
      {"id": "c", "text": "C?", "category": "scope", "triggers": ["any"]},
      {"id": "d", "text": "D?", "category": "scope", "triggers": ["failure_streak"]}]})",
                                          "test");
  ASSERT_TRUE(bank.ok()) << bank.status();
  auto ids = [](const std::vector<const Question*>& qs) {
    std::vector<std::string> out;
    for (const Question* q : qs) out.push_back(q->id);
    return out;
  };
  EXPECT_THAT(ids(bank->Matching({DecisionPoint::kPlateau})), ElementsAre("a", "c"));
  EXPECT_THAT(ids(bank->Matching({DecisionPoint::kCompileFailureStreak})),
              ElementsAre("b", "c", "d"));
  EXPECT_THAT(ids(bank->Matching({DecisionPoint::kCorrectnessFailureStreak})),
              ElementsAre("c", "d"));
  EXPECT_THAT(ids(bank->Matching({})), IsEmpty());
}

// --- AppendQuestion -----------------------------------------------------------

TEST(AppendQuestion, AddsAValidQuestionAndRefusesABadOneLeavingTheFileAlone) {
  std::string dir = kseek::testing::TempDir("qbank");
  std::string path = dir + "/bank.json";
  kseek::testing::WriteFile(path, kseek::testing::ReadFile(ShippedBankPath()));
  size_t before = Bank::Load(path)->questions().size();

  Question q{"what-changed-last", "What changed between the last fast version and this one?",
             Category::kVerifyingAssumption, {Trigger::kPlateau, Trigger::kFailureStreak}};
  ASSERT_TRUE(AppendQuestion(path, q).ok());
  absl::StatusOr<Bank> grown = Bank::Load(path);
  ASSERT_TRUE(grown.ok()) << grown.status();
  ASSERT_EQ(grown->questions().size(), before + 1);
  EXPECT_EQ(grown->questions().back().text, q.text);
  EXPECT_EQ(grown->ToJsonText(), kseek::testing::ReadFile(path));

  std::string text_now = kseek::testing::ReadFile(path);
  absl::Status again = AppendQuestion(path, q);
  EXPECT_EQ(again.message(),
            path + ": questions[" + std::to_string(before + 1) +
                "] (id 'what-changed-last'): duplicate id (also questions[" +
                std::to_string(before) + "])");
  Question leading{"new-one", "Have you tried a bigger block?", Category::kScope,
                   {Trigger::kPlateau}};
  EXPECT_THAT(AppendQuestion(path, leading).message(), HasSubstr("names 'have you tried'"));
  EXPECT_EQ(kseek::testing::ReadFile(path), text_now);
}

// --- Decision points ----------------------------------------------------------

// Evaluations one second apart from t0; 'c' correct with the speedup, 'x'
// compile failure, 'w' compiled but wrong.
std::vector<Evaluation> Evals(const std::vector<std::pair<char, double>>& spec) {
  std::vector<Evaluation> out;
  for (size_t i = 0; i < spec.size(); ++i) {
    Evaluation e;
    e.index = static_cast<int64_t>(i);
    e.time = absl::FromUnixSeconds(1000 + static_cast<int64_t>(i));
    e.compiled = spec[i].first != 'x';
    e.correct = spec[i].first == 'c';
    e.speedup = spec[i].second;
    out.push_back(e);
  }
  return out;
}

TEST(Plateau, FiresWhenTheLastNEvaluationsGainLessThanEpsilon) {
  DecisionPointOptions o;
  o.plateau_window = 3;
  o.min_gain = 0.02;
  // Best before the window 1.50; best within it 1.52 (+1.3%): a plateau.
  EXPECT_TRUE(IsPlateau(Evals({{'c', 1.0}, {'c', 1.5}, {'c', 1.52}, {'w', 0}, {'c', 1.4}}), o));
  // 1.53 is +2%: a gain, not a plateau.
  EXPECT_FALSE(IsPlateau(Evals({{'c', 1.0}, {'c', 1.5}, {'c', 1.53}, {'w', 0}, {'c', 1.4}}), o));
  // Fewer than N evaluations: too early to say.
  EXPECT_FALSE(IsPlateau(Evals({{'c', 1.0}, {'c', 1.0}}), o));
  // Nothing correct in the window: no gain.
  EXPECT_TRUE(IsPlateau(Evals({{'c', 1.0}, {'x', 0}, {'w', 0}, {'x', 0}}), o));
  // The first correct result ever is a gain.
  EXPECT_FALSE(IsPlateau(Evals({{'x', 0}, {'w', 0}, {'c', 0.3}}), o));
}

TEST(Plateau, CountsOnlyEvaluationsSinceTheLastQuestion) {
  DecisionPointOptions o;
  o.plateau_window = 3;
  auto evals = Evals({{'c', 1.0}, {'c', 1.0}, {'c', 1.0}, {'c', 1.0}, {'c', 1.0}});
  EXPECT_TRUE(IsPlateau(evals, o, absl::FromUnixSeconds(1002)));
  EXPECT_FALSE(IsPlateau(evals, o, absl::FromUnixSeconds(1003)));
}

TEST(FailureStreaks, CountTheTrailingRunOfEachKind) {
  auto evals = Evals({{'c', 1.0}, {'w', 0}, {'x', 0}, {'x', 0}, {'x', 0}});
  EXPECT_EQ(CompileFailureRun(evals), 3);
  EXPECT_EQ(CorrectnessFailureRun(evals), 0);
  EXPECT_EQ(FailureRun(evals), 4);
  EXPECT_EQ(CompileFailureRun(evals, absl::FromUnixSeconds(1003)), 2);
  auto wrong = Evals({{'x', 0}, {'w', 0}, {'w', 0}});
  EXPECT_EQ(CorrectnessFailureRun(wrong), 2);
  EXPECT_EQ(CompileFailureRun(wrong), 0);
}

TEST(DetectDecisionPoints, ReportsEachFiringPointWithWhy) {
  SessionHistory h;
  h.evaluations = Evals({{'c', 1.2}, {'c', 1.3}, {'w', 0}, {'w', 0}, {'w', 0}});
  h.agent_messages = {{absl::FromUnixSeconds(999), "We are memory bound, nothing to gain."},
                      {absl::FromUnixSeconds(1004), "Still wrong; checking the indexing."}};
  DecisionPointOptions o;
  o.plateau_window = 3;
  o.failure_streak = 3;
  std::vector<FiredDecisionPoint> fired =
      DetectDecisionPoints(h, o, absl::FromUnixSeconds(1000), /*turn_ended_without_goal=*/true);
  std::vector<DecisionPoint> points;
  for (const auto& f : fired) points.push_back(f.point);
  // The memory-bound claim came before `since`, so it does not fire.
  EXPECT_THAT(points, ElementsAre(DecisionPoint::kTurnEndNoGoal, DecisionPoint::kPlateau,
                                  DecisionPoint::kFailureStreak,
                                  DecisionPoint::kCorrectnessFailureStreak));
  EXPECT_EQ(fired[1].detail,
            "no gain of at least 2% over the last 3 evaluations (best 1.30x before them, none "
            "correct among them)");
  EXPECT_EQ(fired[3].detail, "the last 3 evaluations compiled but were wrong");

  fired = DetectDecisionPoints(h, o, absl::InfinitePast(), false);
  ASSERT_FALSE(fired.empty());
  EXPECT_EQ(fired[1].point, DecisionPoint::kClaimedLimit);
  EXPECT_THAT(fired[1].detail, HasSubstr("(bound): \"we are memory bound\""));
}

// --- Claimed limits -----------------------------------------------------------

TEST(ClaimedLimit, FindsClaimsInAnAgentsWords) {
  for (const char* text : {
           "The kernel is memory-bound at this point, so further changes to the math won't help.",
           "I think we've hit the hardware limit here.",
           "This cannot be improved further without changing the algorithm.",
           "We're at 92% of the theoretical peak bandwidth.",
           "The current version is essentially optimal for these shapes.",
           "Throughput is close to the speed of light for this GPU.",
           "Further gains are unlikely; we're at diminishing returns.",
           "It's not memory bound, but it is compute bound now.",
           "At 1.31x this is as fast as it can go on this hardware.",
           "There is no more headroom left in the inner loop.",
           "The loads already saturate the memory bandwidth.",
       }) {
    EXPECT_TRUE(FindClaimedLimit(text).has_value()) << text;
  }
}

TEST(ClaimedLimit, IgnoresNegationsConditionsQuestionsAndOtherUsesOfTheWords) {
  for (const char* text : {
           "We are not memory bound yet; the profile shows idle issue slots.",
           "I don't think we're at the hardware limit.",
           "We are nowhere near the theoretical peak.",
           "Let me check whether the kernel is memory bound.",
           "If it were memory bound, the bandwidth would be much higher.",
           "Is this kernel memory bound?",
           "It can be improved further by overlapping the loads with the math.",
           "The optimal block size is still unclear.",
           "This version is suboptimal; let me restructure the loop.",
           "We're only at 40% of the theoretical peak, so there is plenty of room.",
           "The kernel is far from optimal.",
           "Compiled fine; 1.12x on all scenarios.",
       }) {
    std::optional<LimitClaim> claim = FindClaimedLimit(text);
    EXPECT_FALSE(claim.has_value()) << text << " -> " << (claim ? claim->pattern : "");
  }
}

TEST(ClaimedLimit, NamesThePatternAndClause) {
  std::optional<LimitClaim> claim =
      FindClaimedLimit("Compiled fine. It isn't memory bound, however it's compute bound.");
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->pattern, "bound");
  EXPECT_EQ(claim->clause, "it s compute bound");
}

// --- Statistics ---------------------------------------------------------------

TEST(Stats, WorkedExample) {
  // One session: speedups by evaluation index (c = correct, w = wrong).
  //   0:c1.00  1:c1.10  2:w  3:c1.20  4:c1.21  5:c1.50  6:c1.50  7:w
  // Questions: A after 1, B after 3, human after 4, A after 5, C after 7.
  std::vector<Evaluation> evals = Evals({{'c', 1.00}, {'c', 1.10}, {'w', 0}, {'c', 1.20},
                                         {'c', 1.21}, {'c', 1.50}, {'c', 1.50}, {'w', 0}});
  std::vector<AskedQuestion> asked = {{"a", 1}, {"b", 3}, {"", 4}, {"a", 5}, {"c", 7}};
  std::vector<AskRecord> records = BuildAskRecords(evals, asked, /*window=*/3);
  ASSERT_EQ(records.size(), 4u);
  // A after 1: before 1.10; window 2..3 (B comes after 3): best 1.20, +9.1%.
  EXPECT_EQ(records[0].question_id, "a");
  EXPECT_DOUBLE_EQ(*records[0].best_before, 1.10);
  EXPECT_DOUBLE_EQ(*records[0].best_after, 1.20);
  // B after 3: before 1.20; window 4..4 (the human came after 4): 1.21, +0.8%.
  EXPECT_DOUBLE_EQ(*records[1].best_after, 1.21);
  // A after 5: before 1.50; window 6..7: 1.50, +0%.
  EXPECT_DOUBLE_EQ(*records[2].best_before, 1.50);
  EXPECT_DOUBLE_EQ(*records[2].best_after, 1.50);
  // C after the last evaluation: nothing after it yet.
  EXPECT_FALSE(records[3].best_after.has_value());

  // A second session, where A was asked before any correct kernel and a
  // correct one followed: a gain without a size.
  records.push_back({"a", 0, std::nullopt, 0.8});
  // And one where B was followed by +40%.
  records.push_back({"b", 9, 1.0, 1.4});

  std::map<std::string, QuestionStats> stats = ComputeQuestionStats(records, 0.02);
  ASSERT_EQ(stats.size(), 3u);
  const QuestionStats& a = stats["a"];
  EXPECT_EQ(a.asked, 3);
  EXPECT_EQ(a.gains_followed, 2);
  ASSERT_EQ(a.gains.size(), 1u);
  EXPECT_NEAR(*a.median_gain, 1.20 / 1.10 - 1.0, 1e-12);
  const QuestionStats& b = stats["b"];
  EXPECT_EQ(b.asked, 2);
  EXPECT_EQ(b.gains_followed, 1);  // +0.8% is below epsilon
  EXPECT_NEAR(*b.median_gain, 0.4, 1e-12);
  const QuestionStats& c = stats["c"];
  EXPECT_EQ(c.asked, 1);
  EXPECT_EQ(c.gains_followed, 0);
  EXPECT_FALSE(c.median_gain.has_value());
}

TEST(Stats, MedianOfAnEvenNumberOfGainsIsTheMeanOfTheMiddleTwo) {
  std::vector<AskRecord> records = {
      {"q", 1, 1.0, 1.1}, {"q", 2, 1.0, 1.5}, {"q", 3, 1.0, 1.2}, {"q", 4, 1.0, 1.3}};
  QuestionStats s = ComputeQuestionStats(records, 0.02)["q"];
  EXPECT_EQ(s.gains_followed, 4);
  EXPECT_NEAR(*s.median_gain, 0.25, 1e-12);
}

// --- Self-ask -----------------------------------------------------------------

TEST(SelfAsk, RendersEveryQuestionWithItsIdAndTheMarker) {
  absl::StatusOr<Bank> bank = Bank::Load(ShippedBankPath());
  ASSERT_TRUE(bank.ok()) << bank.status();
  std::string text = RenderBankForAgent(*bank);
  EXPECT_THAT(text, HasSubstr("APPLIED-QUESTION: <id>"));
  for (const Question& q : bank->questions())
    EXPECT_THAT(text, HasSubstr("- " + q.id + ": " + q.text)) << q.id;
}

TEST(SelfAsk, ParsesMarkedQuestionsOnceEachAndReportsUnknownIds) {
  absl::StatusOr<Bank> bank = Bank::Load(ShippedBankPath());
  ASSERT_TRUE(bank.ok()) << bank.status();
  AppliedQuestions applied = ParseAppliedQuestions(
      "The limit I named came from a guess, so I measured it.\n"
      "APPLIED-QUESTION: limit-evidence\n"
      "  - `APPLIED-QUESTION: least-work`\n"
      "applied-question:limit-evidence.\n"
      "APPLIED-QUESTION: use-more-threads\n"
      "I did not write APPLIED-QUESTION: repeated-work here at the start of a line.\n"
      "APPLIED-QUESTION:\n",
      *bank);
  EXPECT_THAT(applied.ids, ElementsAre("limit-evidence", "least-work"));
  EXPECT_THAT(applied.unknown_ids, ElementsAre("use-more-threads"));
}

}  // namespace
}  // namespace kseek::question_bank
