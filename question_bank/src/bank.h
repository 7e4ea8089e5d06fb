// The question bank: the questions the scheduler may ask, as data.
//
// A Bank is an ordered list of validated questions, normally read from
// question_bank/bank.json (format in question_bank/README.md). Every way of
// building one validates it, so a Bank in hand always holds unique slug ids,
// texts that pass CheckQuestionText, known categories and at least one known
// trigger per question. Errors name the source, the entry and what is wrong:
//   "bank.json: questions[7] (id 'x'): unknown category 'foo' (expected ...)"
// A Bank is a plain value: copyable, immutable, safe to share between
// threads. AppendQuestion changes a file and is not safe against another
// writer of the same file.
#ifndef KERNELSEEK_QUESTION_BANK_BANK_H_
#define KERNELSEEK_QUESTION_BANK_BANK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "question_bank/src/question.h"

namespace kseek::question_bank {

inline constexpr int kBankFormatVersion = 1;
inline constexpr int kMaxIdChars = 64;

class Bank {
 public:
  // Reads and validates a bank file. NOT_FOUND when it cannot be opened,
  // INVALID_ARGUMENT (naming `path`) for anything wrong inside.
  static absl::StatusOr<Bank> Load(const std::string& path);
  // Validates bank.json text; `source` names it in errors.
  static absl::StatusOr<Bank> Parse(absl::string_view json_text, absl::string_view source);
  // Validates questions built in code; `source` names them in errors.
  static absl::StatusOr<Bank> FromQuestions(std::vector<Question> questions,
                                            absl::string_view source);

  // In file order.
  const std::vector<Question>& questions() const { return questions_; }
  // nullptr when no question has this id.
  const Question* Find(absl::string_view id) const;
  // The questions eligible at any of `points`, in file order.
  std::vector<const Question*> Matching(const std::vector<DecisionPoint>& points) const;

  // The bank as bank.json text in its canonical layout (the shipped file is
  // kept in it, so that a rewrite changes only what changed).
  std::string ToJsonText() const;

 private:
  Bank() = default;
  std::vector<Question> questions_;
};

// Adds `question` at the end of the bank file at `path` and writes it back
// (a temporary file renamed over it) only when the whole bank still
// validates; otherwise the file is untouched and the error names the new
// entry, e.g. "bank.json: questions[41] (id 'x'): duplicate id (also
// questions[3])".
absl::Status AppendQuestion(const std::string& path, const Question& question);

}  // namespace kseek::question_bank

#endif  // KERNELSEEK_QUESTION_BANK_BANK_H_
