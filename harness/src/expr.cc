// Recursive-descent parser and evaluator for task expressions (expr.h).
#include "harness/src/expr.h"

#include <cctype>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernelseek/abi.h"

namespace kseek {

struct Expr::Node {
  enum Kind { kNumber, kName, kUnary, kBinary, kTernary, kCall } kind;
  int64_t number = 0;
  std::string name;  // variable, operator or function
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  absl::StatusOr<NodePtr> ParseAll(std::set<std::string>* names) {
    names_ = names;
    auto node = ParseTernary();
    if (!node.ok()) return node;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text");
    return node;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " at column ", pos_ + 1, " of expression \"", text_, "\""));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(const std::string& tok) {
    SkipSpace();
    if (text_.compare(pos_, tok.size(), tok) != 0) return false;
    // Do not split "<=" into "<" and "=" or "&&" into "&".
    if (tok.size() == 1 && pos_ + 1 < text_.size()) {
      char next = text_[pos_ + 1];
      if ((tok == "<" || tok == ">" || tok == "!") && next == '=') return false;
    }
    pos_ += tok.size();
    return true;
  }
  static NodePtr Make(Expr::Node::Kind kind, std::string name,
                      std::vector<NodePtr> args) {
    auto n = std::make_shared<Expr::Node>();
    n->kind = kind;
    n->name = std::move(name);
    n->args = std::move(args);
    return n;
  }

  absl::StatusOr<NodePtr> ParseTernary() {
    auto cond = ParseBinary(0);
    if (!cond.ok()) return cond;
    if (!Eat("?")) return cond;
    auto a = ParseTernary();
    if (!a.ok()) return a;
    if (!Eat(":")) return Error("expected ':'");
    auto b = ParseTernary();
    if (!b.ok()) return b;
    return Make(Expr::Node::kTernary, "?", {*cond, *a, *b});
  }

  // Precedence climbing over the binary operators, lowest level first.
  absl::StatusOr<NodePtr> ParseBinary(int level) {
    static const std::vector<std::vector<std::string>> kLevels = {
        {"||"}, {"&&"}, {"==", "!="}, {"<=", ">=", "<", ">"},
        {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(kLevels.size())) return ParseUnary();
    auto lhs = ParseBinary(level + 1);
    if (!lhs.ok()) return lhs;
    NodePtr node = *lhs;
    for (;;) {
      std::string op;
      for (const auto& candidate : kLevels[level]) {
        if (Eat(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op.empty()) return node;
      auto rhs = ParseBinary(level + 1);
      if (!rhs.ok()) return rhs;
      node = Make(Expr::Node::kBinary, op, {node, *rhs});
    }
  }

  absl::StatusOr<NodePtr> ParseUnary() {
    if (Eat("-")) {
      auto operand = ParseUnary();
      if (!operand.ok()) return operand;
      return Make(Expr::Node::kUnary, "-", {*operand});
    }
    if (Eat("!")) {
      auto operand = ParseUnary();
      if (!operand.ok()) return operand;
      return Make(Expr::Node::kUnary, "!", {*operand});
    }
    return ParsePrimary();
  }

  absl::StatusOr<NodePtr> ParsePrimary() {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    char c = text_[pos_];
    if (Eat("(")) {
      auto inner = ParseTernary();
      if (!inner.ok()) return inner;
      if (!Eat(")")) return Error("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        int digit = text_[pos_] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return Error("number too large");
        value = value * 10 + digit;
        ++pos_;
      }
      auto n = std::make_shared<Expr::Node>();
      n->kind = Expr::Node::kNumber;
      n->number = value;
      return NodePtr(n);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string ident = text_.substr(start, pos_ - start);
      if (!Eat("(")) {
        names_->insert(ident);
        return Make(Expr::Node::kName, ident, {});
      }
      static const std::set<std::string> kFunctions = {"min", "max", "ceil_div", "size"};
      if (!kFunctions.count(ident)) return Error(absl::StrCat("unknown function '", ident, "'"));
      std::vector<NodePtr> args;
      if (!Eat(")")) {
        for (;;) {
          auto arg = ParseTernary();
          if (!arg.ok()) return arg;
          args.push_back(*arg);
          if (Eat(")")) break;
          if (!Eat(",")) return Error("expected ',' or ')'");
        }
      }
      size_t want = ident == "size" ? 1 : 2;
      if (args.size() != want)
        return Error(absl::StrCat(ident, "() takes ", want, " argument(s)"));
      if (ident == "size" && args[0]->kind != Expr::Node::kName)
        return Error("size() takes the name of a dtype parameter");
      return Make(Expr::Node::kCall, ident, std::move(args));
    }
    return Error(absl::StrCat("unexpected character '", std::string(1, c), "'"));
  }

  const std::string& text_;
  size_t pos_ = 0;
  std::set<std::string>* names_ = nullptr;
};

absl::StatusOr<int64_t> EvalNode(const Expr::Node& n, const ExprEnv& env,
                                 const std::string& text) {
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(what, " in \"", text, "\""));
  };
  switch (n.kind) {
    case Expr::Node::kNumber:
      return n.number;
    case Expr::Node::kName: {
      auto it = env.find(n.name);
      if (it == env.end()) return fail(absl::StrCat("unknown name '", n.name, "'"));
      return it->second;
    }
    case Expr::Node::kUnary: {
      auto v = EvalNode(*n.args[0], env, text);
      if (!v.ok()) return v;
      return n.name == "-" ? -*v : static_cast<int64_t>(*v == 0);
    }
    case Expr::Node::kTernary: {
      auto c = EvalNode(*n.args[0], env, text);
      if (!c.ok()) return c;
      return EvalNode(*n.args[*c != 0 ? 1 : 2], env, text);
    }
    case Expr::Node::kCall: {
      if (n.name == "size") {
        auto it = env.find(n.args[0]->name);
        if (it == env.end()) return fail(absl::StrCat("unknown name '", n.args[0]->name, "'"));
        size_t bytes = kseek_dtype_size(static_cast<int32_t>(it->second));
        if (bytes == 0) return fail(absl::StrCat("'", n.args[0]->name, "' is not a dtype"));
        return static_cast<int64_t>(bytes);
      }
      auto a = EvalNode(*n.args[0], env, text);
      if (!a.ok()) return a;
      auto b = EvalNode(*n.args[1], env, text);
      if (!b.ok()) return b;
      if (n.name == "min") return std::min(*a, *b);
      if (n.name == "max") return std::max(*a, *b);
      if (*b == 0) return fail("division by zero in ceil_div");
      return (*a + *b - 1) / *b;
    }
    case Expr::Node::kBinary: {
      auto a = EvalNode(*n.args[0], env, text);
      if (!a.ok()) return a;
      // && and || short-circuit like C.
      if (n.name == "&&" && *a == 0) return int64_t{0};
      if (n.name == "||" && *a != 0) return int64_t{1};
      auto b = EvalNode(*n.args[1], env, text);
      if (!b.ok()) return b;
      int64_t x = *a, y = *b, r = 0;
      const std::string& op = n.name;
      if (op == "+") {
        if (__builtin_add_overflow(x, y, &r)) return fail("overflow");
      } else if (op == "-") {
        if (__builtin_sub_overflow(x, y, &r)) return fail("overflow");
      } else if (op == "*") {
        if (__builtin_mul_overflow(x, y, &r)) return fail("overflow");
      } else if (op == "/" || op == "%") {
        if (y == 0) return fail("division by zero");
        r = op == "/" ? x / y : x % y;
      } else if (op == "<") r = x < y;
      else if (op == "<=") r = x <= y;
      else if (op == ">") r = x > y;
      else if (op == ">=") r = x >= y;
      else if (op == "==") r = x == y;
      else if (op == "!=") r = x != y;
      else if (op == "&&" || op == "||") r = y != 0;
      return r;
    }
  }
  return fail("malformed expression");
}

}  // namespace

absl::StatusOr<Expr> Expr::Parse(const std::string& text) {
  Expr e;
  e.text_ = text;
  Parser parser(e.text_);
  auto root = parser.ParseAll(&e.names_);
  if (!root.ok()) return root.status();
  e.root_ = *root;
  return e;
}

absl::StatusOr<int64_t> Expr::Eval(const ExprEnv& env) const {
  if (!root_) return absl::FailedPreconditionError("empty expression");
  return EvalNode(*root_, env, text_);
}

}  // namespace kseek
