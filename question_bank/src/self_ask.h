// Self-ask mode: the agent receives the whole bank in its brief and asks
// itself the questions; it records each question that changed what it did
// next on a line of its own:
//
//   APPLIED-QUESTION: layer-below-decides
//
// The marker is matched at the start of a line (after white space, '>', '-',
// '*' or '`'), in any letter case; the id follows after optional spaces and
// ends at the first character that cannot be part of an id. Pure functions,
// thread-safe.
#ifndef KERNELSEEK_QUESTION_BANK_SELF_ASK_H_
#define KERNELSEEK_QUESTION_BANK_SELF_ASK_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "question_bank/src/bank.h"

namespace kseek::question_bank {

inline constexpr absl::string_view kAppliedQuestionMarker = "APPLIED-QUESTION:";

// The bank as plain text for the agent's brief: how to use it, the marker
// line, then the questions grouped by category with their ids and triggers.
std::string RenderBankForAgent(const Bank& bank);

struct AppliedQuestions {
  std::vector<std::string> ids;          // bank ids, in order of first mention
  std::vector<std::string> unknown_ids;  // marked but not in the bank
};

// The questions `agent_text` marks as applied.
AppliedQuestions ParseAppliedQuestions(absl::string_view agent_text, const Bank& bank);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_SELF_ASK_H_
