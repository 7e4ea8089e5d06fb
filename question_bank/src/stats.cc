#include "question_bank/src/stats.h"

#include <algorithm>
#include <cstdint>

namespace kseek::question_bank {

std::optional<double> RelativeGain(const AskRecord& record) {
  if (!record.best_before || !record.best_after || *record.best_before <= 0.0) return std::nullopt;
  return *record.best_after / *record.best_before - 1.0;
}

bool GainFollowed(const AskRecord& record, double min_gain) {
  if (!record.best_before) return record.best_after.has_value();
  std::optional<double> gain = RelativeGain(record);
  return gain && *gain >= min_gain;
}

std::vector<AskRecord> BuildAskRecords(const std::vector<Evaluation>& evaluations,
                                       const std::vector<AskedQuestion>& asked, int window) {
  std::vector<AskRecord> records;
  for (size_t i = 0; i < asked.size(); ++i) {
    if (asked[i].question_id.empty()) continue;
    int64_t at = asked[i].asked_after_evaluation;
    int64_t last = at + std::max(window, 0);
    if (i + 1 < asked.size()) last = std::min(last, asked[i + 1].asked_after_evaluation);
    AskRecord r;
    r.question_id = asked[i].question_id;
    r.asked_after_evaluation = at;
    r.best_before = BestSpeedup(evaluations, INT64_MIN, at);
    r.best_after = BestSpeedup(evaluations, at + 1, last);
    records.push_back(std::move(r));
  }
  return records;
}

std::map<std::string, QuestionStats> ComputeQuestionStats(const std::vector<AskRecord>& records,
                                                          double min_gain) {
  std::map<std::string, QuestionStats> stats;
  for (const AskRecord& r : records) {
    QuestionStats& s = stats[r.question_id];
    ++s.asked;
    if (!GainFollowed(r, min_gain)) continue;
    ++s.gains_followed;
    if (std::optional<double> gain = RelativeGain(r)) s.gains.push_back(*gain);
  }
  for (auto& [id, s] : stats) {
    if (s.gains.empty()) continue;
    std::sort(s.gains.begin(), s.gains.end());
    size_t n = s.gains.size();
    s.median_gain = n % 2 == 1 ? s.gains[n / 2] : (s.gains[n / 2 - 1] + s.gains[n / 2]) / 2.0;
  }
  return stats;
}

}  // namespace kseek::question_bank
