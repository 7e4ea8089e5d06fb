// Task expressions: arithmetic, precedence, functions, errors.
#include "harness/src/expr.h"

#include "gtest/gtest.h"
#include "kernelseek/abi.h"

namespace kseek {
namespace {

int64_t Eval(const std::string& text, const ExprEnv& env = {}) {
  auto e = Expr::Parse(text);
  EXPECT_TRUE(e.ok()) << e.status();
  auto v = e->Eval(env);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : -999999;
}

TEST(Expr, ArithmeticFollowsCPrecedence) {
  EXPECT_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("7 / 2"), 3);
  EXPECT_EQ(Eval("7 % 4"), 3);
  EXPECT_EQ(Eval("-3 + 5"), 2);
  EXPECT_EQ(Eval("10 - 4 - 3"), 3);
  EXPECT_EQ(Eval("2 * 3 < 7"), 1);
  EXPECT_EQ(Eval("1 < 2 && 3 <= 2"), 0);
  EXPECT_EQ(Eval("1 == 2 || !0"), 1);
  EXPECT_EQ(Eval("5 != 5"), 0);
}

TEST(Expr, NamesAndFunctions) {
  ExprEnv env = {{"rows", 100}, {"cols", 33}, {"dtype", KSEEK_BF16}};
  EXPECT_EQ(Eval("rows * cols", env), 3300);
  EXPECT_EQ(Eval("ceil_div(cols, 32)", env), 2);
  EXPECT_EQ(Eval("min(rows, cols) + max(rows, cols)", env), 133);
  EXPECT_EQ(Eval("2 * rows * cols * size(dtype)", env), 13200);
  auto e = Expr::Parse("rows * cols + rows");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->names(), (std::set<std::string>{"rows", "cols"}));
}

TEST(Expr, TernaryForCausalCounts) {
  // Unmasked (query, key) pairs of bottom-right causal attention.
  const char* pairs =
      "causal ? (sq <= sk ? sq * (sk - sq) + sq * (sq + 1) / 2 : sk * (sk + 1) / 2) : sq * sk";
  EXPECT_EQ(Eval(pairs, {{"causal", 0}, {"sq", 4}, {"sk", 6}}), 24);
  EXPECT_EQ(Eval(pairs, {{"causal", 1}, {"sq", 4}, {"sk", 4}}), 10);
  EXPECT_EQ(Eval(pairs, {{"causal", 1}, {"sq", 2}, {"sk", 5}}), 9);   // rows see 4 and 5 keys
  EXPECT_EQ(Eval(pairs, {{"causal", 1}, {"sq", 5}, {"sk", 2}}), 3);   // 3 rows see none
}

TEST(Expr, ErrorsSayWhere) {
  auto bad = Expr::Parse("rows * (cols + 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected ')'"), std::string::npos) << bad.status();
  EXPECT_FALSE(Expr::Parse("rows $ 2").ok());
  EXPECT_FALSE(Expr::Parse("sqrt(4)").ok());
  EXPECT_FALSE(Expr::Parse("min(1)").ok());
  EXPECT_FALSE(Expr::Parse("").ok());
  EXPECT_FALSE(Expr::Parse("99999999999999999999").ok());

  auto e = Expr::Parse("rows / cols");
  ASSERT_TRUE(e.ok());
  auto div0 = e->Eval({{"rows", 1}, {"cols", 0}});
  EXPECT_FALSE(div0.ok());
  auto unknown = e->Eval({{"rows", 1}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("cols"), std::string::npos);
  auto big = Expr::Parse("a * a");
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE(big->Eval({{"a", int64_t{1} << 40}}).ok());
}

}  // namespace
}  // namespace kseek
