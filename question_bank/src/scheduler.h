// The scheduler: which question, if any, to ask the agent now.
//
// The rule (ChooseNextQuestion):
//   1. A waiting human message goes first: the oldest one, whether or not a
//      decision point fired.
//   2. Otherwise, when decision points fired, the most specific of them
//      decides (claimed_limit, then the failure streaks, plateau,
//      turn_end_no_goal): the candidates are the bank questions with a
//      trigger matching it (question.h), less those among the last R
//      questions of this session (humans' count towards R). When none is
//      left, the next fired point decides. So an agent that claims a limit
//      at the end of its turn is asked about the limit, not about the turn.
//   3. Candidates are ranked by UCB1 on "a gain followed" (stats.h) with a
//      prior, over the statistics of past sessions:
//        p      = (sum of gains followed + 1) / (sum of times asked + 2),
//                 over the bank's questions: the pooled rate, the prior mean
//        mean   = (gains followed + w p) / (times asked + w)
//        bonus  = c sqrt(ln(T + 1) / (times asked + 1)), T = sum of times asked
//        score  = mean + bonus
//      with w = prior_weight and c = exploration. The highest score is asked;
//      equal scores are ordered by a hash of (seed, id), so the choice is
//      deterministic given the seed. A question with a better record wins
//      among equally asked ones, and the bonus makes one never or rarely
//      asked win sooner or later (exploration).
//   4. No candidate: nothing is asked, and the reason says why.
// Every choice carries a reason sentence for the trace.
//
// Pure functions of their arguments, thread-safe; the returned pointers
// point into the Bank passed in.
#ifndef KERNELSEEK_QUESTION_BANK_SCHEDULER_H_
#define KERNELSEEK_QUESTION_BANK_SCHEDULER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "question_bank/src/bank.h"
#include "question_bank/src/decision_points.h"
#include "question_bank/src/stats.h"

namespace kseek::question_bank {

struct SchedulerOptions {
  int no_repeat_within = 5;   // R: not asked again within the last R questions
  double exploration = 1.0;   // c
  double prior_weight = 2.0;  // w, in times asked
  uint64_t seed = 0;          // orders equal scores
};

struct HumanMessage {
  std::string author;
  std::string text;
};

// What the scheduler is told about the session now.
struct SchedulerInput {
  std::vector<FiredDecisionPoint> decision_points;    // DetectDecisionPoints
  std::vector<HumanMessage> pending_human_messages;   // oldest first
  std::vector<std::string> asked_this_session;        // ids oldest first; "" for a human's
};

struct RankedQuestion {
  const Question* question = nullptr;
  double score = 0.0;  // mean + bonus
  double mean = 0.0;
  double bonus = 0.0;
};

// `candidates` ranked by the rule of step 3, best first. `stats` holds the
// past sessions' statistics of `bank`'s questions by id (missing: never asked).
std::vector<RankedQuestion> RankQuestions(const std::vector<const Question*>& candidates,
                                          const Bank& bank,
                                          const std::map<std::string, QuestionStats>& stats,
                                          const SchedulerOptions& options);

struct ScheduledQuestion {
  enum class Source { kNone, kHuman, kBank };
  Source source = Source::kNone;
  std::string text;              // what the agent is asked (kHuman, kBank)
  std::string question_id;       // kBank
  size_t human_message = 0;      // kHuman: index in pending_human_messages
  std::string reason;            // always: why this question, or why none
};

ScheduledQuestion ChooseNextQuestion(const SchedulerInput& input, const Bank& bank,
                                     const std::map<std::string, QuestionStats>& stats,
                                     const SchedulerOptions& options);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_SCHEDULER_H_
