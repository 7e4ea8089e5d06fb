// Question statistics: how often each bank question was followed by a gain.
//
// The coordinator stores one AskRecord per bank question asked (BuildAskRecords
// makes them from a session's history) and feeds the records of past sessions
// to ComputeQuestionStats; the scheduler ranks questions by the result.
// Definitions:
//   best before   the best correct speedup of the session up to and including
//                 the evaluation after which the question was asked
//   best after    the best correct speedup among the next K evaluations, or
//                 fewer when another question (a human's too) came first
//   gain          best after / best before - 1, when both exist
//   gain followed gain >= epsilon; or no correct evaluation before and one
//                 after (a first correct kernel; this gain has no size and is
//                 left out of the median)
//   median gain   the median of the sized gains that followed (nullopt: none)
// Pure functions, thread-safe.
#ifndef KERNELSEEK_QUESTION_BANK_STATS_H_
#define KERNELSEEK_QUESTION_BANK_STATS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "question_bank/src/session_history.h"

namespace kseek::question_bank {

struct AskRecord {
  std::string question_id;
  int64_t asked_after_evaluation = -1;  // evaluation index; -1 before the first
  std::optional<double> best_before;
  std::optional<double> best_after;
};

struct QuestionStats {
  int64_t asked = 0;
  int64_t gains_followed = 0;
  std::vector<double> gains;          // sized gains that followed, ascending
  std::optional<double> median_gain;  // median of `gains`
};

// A question asked in a session: a bank question's id, or "" for a human's.
struct AskedQuestion {
  std::string question_id;
  int64_t asked_after_evaluation = -1;
};

// gain of one record (nullopt unless both speedups exist).
std::optional<double> RelativeGain(const AskRecord& record);
bool GainFollowed(const AskRecord& record, double min_gain);

// Records for the bank questions of one session. `asked` is in the order
// asked and includes humans' questions (they end the window of the question
// before them but get no record); `window` is K.
std::vector<AskRecord> BuildAskRecords(const std::vector<Evaluation>& evaluations,
                                       const std::vector<AskedQuestion>& asked, int window);

// Per question id, over all `records` (any number of sessions).
std::map<std::string, QuestionStats> ComputeQuestionStats(const std::vector<AskRecord>& records,
                                                          double min_gain);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_STATS_H_
