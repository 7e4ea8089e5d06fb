// Integer expressions over task parameters: shapes, FLOP and byte counts.
//
// Grammar: integers, parameter names, + - * / % (C semantics on int64),
// comparisons (< <= > >= == !=, giving 0 or 1), && ||, the conditional
// `c ? a : b`, parentheses, and the functions min(a,b), max(a,b),
// ceil_div(a,b) and size(d) (bytes per element of a dtype parameter).
// Parsed once, evaluated per scenario. Thread-safe once built.
#ifndef KERNELSEEK_HARNESS_EXPR_H_
#define KERNELSEEK_HARNESS_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"

namespace kseek {

using ExprEnv = std::map<std::string, int64_t>;

class Expr {
 public:
  // Parses `text`; the error says where in the text it went wrong.
  static absl::StatusOr<Expr> Parse(const std::string& text);

  // Evaluates with the given variables; an unknown name, a division by
  // zero or an overflow is an error.
  absl::StatusOr<int64_t> Eval(const ExprEnv& env) const;

  const std::string& text() const { return text_; }
  // Names the expression reads.
  const std::set<std::string>& names() const { return names_; }

  struct Node;

 private:
  std::string text_;
  std::set<std::string> names_;
  std::shared_ptr<const Node> root_;
};

}  // namespace kseek

#endif  // KERNELSEEK_HARNESS_EXPR_H_
