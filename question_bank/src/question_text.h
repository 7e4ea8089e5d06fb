// The rule a question's text must follow: one short question that directs
// attention and supplies no information.
//
// "No information" cannot be decided by a program. What is checked here is a
// deliberately small, honest approximation:
//   - one line, at most kMaxQuestionChars characters, ending in the only '?';
//   - no digit (a question never carries a number);
//   - none of the words or phrases of InformationTerms(): technique names,
//     hardware units and memory spaces, libraries, profiler names, operator
//     names, and phrases that suggest an action ("have you tried", "why
//     not"). Matching is case-insensitive on whole words, after every
//     character that is not a letter or digit is read as a space (so
//     "cp.async" and "split-k" are found); a term ending in '*' also matches
//     longer words ("swizzl*" finds "swizzled").
// A text that passes can still hint at an answer through words not listed
// (or a number spelled out); every question added to the bank is also read
// by a person. Pure functions, thread-safe.
#ifndef KERNELSEEK_QUESTION_BANK_QUESTION_TEXT_H_
#define KERNELSEEK_QUESTION_BANK_QUESTION_TEXT_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kseek::question_bank {

inline constexpr int kMaxQuestionChars = 120;

// The deny-list, as written above (lower case; '*' marks a prefix).
const std::vector<absl::string_view>& InformationTerms();

// OK, or INVALID_ARGUMENT with a message that starts with "text" and says
// what is wrong, e.g. "text names 'tensor core*' (questions direct attention
// and never supply a technique, unit, tool or action)".
absl::Status CheckQuestionText(absl::string_view text);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_QUESTION_TEXT_H_
