// The comparison of an output with the reference (runner_data.h,
// compare_partial.h): the per-element rule, and partials merged in any
// order giving the same verdict, as the judge's CUDA kernel merges them.
#include "harness/src/runner_data.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "harness/src/compare_partial.h"
#include "gtest/gtest.h"

namespace kseek {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Comparison CompareF32(const std::vector<float>& cand, const std::vector<float>& ref,
                      Tolerance tol = {1e-3, 1e-3}) {
  return CompareOutput("o", KSEEK_F32, cand.data(), ref.data(), cand.size(), tol);
}

TEST(CompareOutputTest, FiniteWithinToleranceAndOutside) {
  std::vector<float> ref(1000, 1.0f), cand = ref;
  Comparison same = CompareF32(cand, ref);
  EXPECT_TRUE(same.result.within) << same.error;
  EXPECT_EQ(same.result.rel_l2, 0.0);
  cand[10] = 3.0f;
  Comparison off = CompareF32(cand, ref);
  EXPECT_FALSE(off.result.within);
  EXPECT_DOUBLE_EQ(off.result.max_abs, 2.0);
  EXPECT_NE(off.error.find("output o: rel_l2"), std::string::npos) << off.error;
  EXPECT_NE(off.error.find("max_abs 2 exceeds"), std::string::npos) << off.error;
}

// The first NaN is named by its index even when it lies in a later chunk
// than other NaNs' counts (the chunks are merged, not scanned in one loop).
TEST(CompareOutputTest, NanNamesTheFirstAcrossChunks) {
  const size_t n = 2 * kDataChunk + 5;
  std::vector<float> ref(n, 1.0f), cand = ref;
  cand[kDataChunk + 3] = NAN;
  cand[2 * kDataChunk + 1] = NAN;
  Comparison c = CompareF32(cand, ref);
  EXPECT_FALSE(c.result.within);
  EXPECT_NE(c.error.find("NaN at element " + std::to_string(kDataChunk + 3) + " (2 of " +
                         std::to_string(n)),
            std::string::npos)
      << c.error;
}

TEST(CompareOutputTest, InfinityPassesOnlyWhereTheReferenceHasTheSame) {
  std::vector<float> ref(64, 0.5f), cand = ref;
  ref[7] = cand[7] = INFINITY;
  EXPECT_TRUE(CompareF32(cand, ref).result.within);
  cand[9] = -INFINITY;
  cand[20] = INFINITY;
  Comparison c = CompareF32(cand, ref);
  EXPECT_FALSE(c.result.within);
  EXPECT_NE(c.error.find("element 9 is -inf where the reference has 0.5 (2 such elements)"),
            std::string::npos)
      << c.error;
}

TEST(CompareOutputTest, NanInTheReferenceBlamesTheTask) {
  std::vector<float> ref(16, 1.0f), cand = ref;
  ref[4] = NAN;
  Comparison c = CompareF32(cand, ref);
  EXPECT_FALSE(c.result.within);
  EXPECT_NE(c.error.find("the reference has NaN at element 4 (1 elements)"), std::string::npos)
      << c.error;
}

ComparePartial Over(uint64_t begin, const std::vector<double>& x, const std::vector<double>& r) {
  ComparePartial p;
  double diff2 = 0, ref2 = 0, max_abs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    CompareElement(begin + i, x[i], r[i], diff2, ref2, max_abs, p);
  }
  p.diff2 = diff2;
  p.ref2 = ref2;
  p.max_abs = max_abs;
  return p;
}

// The CUDA kernel's threads interleave, so partials are merged in orders
// other than their elements': every order must keep the smallest index.
TEST(MergeComparePartialTest, ResultDoesNotDependOnTheOrder) {
  const std::vector<double> r = {1, 2, 3, kInf};
  const ComparePartial a = Over(0, {1, NAN, 3, -kInf}, r);     // NaN at 1, inf at 3
  const ComparePartial b = Over(100, {NAN, 2, kInf, kInf}, r);  // NaN at 100, inf at 102
  const ComparePartial c = Over(50, {1.5, 2, 3, 0}, r);         // finite, inf at 53
  const std::vector<std::vector<const ComparePartial*>> orders = {
      {&a, &b, &c}, {&c, &b, &a}, {&b, &a, &c}, {&b, &c, &a}};
  for (const auto& order : orders) {
    ComparePartial m;
    for (const ComparePartial* p : order) MergeComparePartial(m, *p);
    EXPECT_EQ(m.nan_count, 2u);
    EXPECT_EQ(m.first_nan, 1u);
    EXPECT_EQ(m.inf_count, 3u);
    EXPECT_EQ(m.first_inf, 3u);
    EXPECT_EQ(m.inf_cand, -kInf);
    EXPECT_EQ(m.inf_ref, kInf);
    EXPECT_DOUBLE_EQ(m.max_abs, 0.5);
    EXPECT_DOUBLE_EQ(m.diff2, 0.25);
  }
}

TEST(CompareElementTest, FiniteTestsNeedNoLibrary) {
  EXPECT_TRUE(CompareIsFinite(0.0));
  EXPECT_TRUE(CompareIsFinite(-1e308));
  EXPECT_FALSE(CompareIsFinite(kInf));
  EXPECT_FALSE(CompareIsFinite(-kInf));
  EXPECT_FALSE(CompareIsFinite(std::nan("")));
  EXPECT_TRUE(CompareIsNan(std::nan("")));
  EXPECT_FALSE(CompareIsNan(kInf));
}

}  // namespace
}  // namespace kseek
