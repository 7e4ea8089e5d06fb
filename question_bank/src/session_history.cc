#include "question_bank/src/session_history.h"

#include <algorithm>

namespace kseek::question_bank {

std::optional<double> BestSpeedup(const std::vector<Evaluation>& evaluations, int64_t first,
                                  int64_t last) {
  std::optional<double> best;
  for (const Evaluation& e : evaluations) {
    if (e.index < first || e.index > last || !e.correct) continue;
    best = best ? std::max(*best, e.speedup) : e.speedup;
  }
  return best;
}

}  // namespace kseek::question_bank
