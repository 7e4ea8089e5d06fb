// What the question bank needs to know about one session: its evaluations
// and what the agent wrote, oldest first.
//
// Plain values, filled by the coordinator from its store; the functions of
// decision_points.h, stats.h and scheduler.h read them and keep no state.
#ifndef KERNELSEEK_QUESTION_BANK_SESSION_HISTORY_H_
#define KERNELSEEK_QUESTION_BANK_SESSION_HISTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace kseek::question_bank {

// One evaluation of the session's kernel.
struct Evaluation {
  int64_t index = 0;       // position in the session: 0, 1, 2, ... in order
  absl::Time time;         // when its verdict arrived
  bool compiled = false;   // passed the policy check and compiled
  bool correct = false;    // compiled and correct on every scenario
  double speedup = 0.0;    // geometric-mean speedup; read only when correct
};

// Text the agent wrote (a message of a turn, not a tool call).
struct AgentMessage {
  absl::Time time;
  std::string text;
};

struct SessionHistory {
  std::vector<Evaluation> evaluations;       // by index
  std::vector<AgentMessage> agent_messages;  // by time
};

// The best speedup among correct evaluations with index in [first, last];
// nullopt when none of them is correct.
std::optional<double> BestSpeedup(const std::vector<Evaluation>& evaluations, int64_t first,
                                  int64_t last);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_SESSION_HISTORY_H_
