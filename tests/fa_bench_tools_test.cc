// kernels/flash_attention_fwd/bench/compare_runs.py on the anchor results
// kept in the repository: its per-run geomeans must agree with the ones
// anchor.py printed under each table (computed there from unrounded
// times), and input without an anchor table is refused by name.
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

using testing::ProcessResult;

const std::string kBench =
    testing::SourceDir() + "/kernels/flash_attention_fwd/bench";

ProcessResult CompareRuns(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "python3",
                                   kBench + "/compare_runs.py"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(argv);
}

// The number after `prefix` in text; NaN when absent.
double After(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + prefix.size(), nullptr);
}

// compare_runs.py's own-run geomean: the row "NAME SET VALUE ...".
double OwnGeomean(const std::string& out, const std::string& run,
                  const std::string& set) {
  std::string key = run;
  key.resize(8, ' ');
  key += " " + set;
  key.resize(14, ' ');
  return After(out, "\n" + key);
}

// compare_runs.py on two results files (NAME=bench/results/FILE each):
// it succeeds, finds `common` scenarios in both ("N scenarios in every run
// ..."), and each run's own cuDNN geomeans agree with the ones anchor.py
// printed in its file (two-decimal TFLOP/s in the table against
// anchor.py's exact times).
ProcessResult ExpectTwoResultsCompared(const std::pair<std::string, std::string>& a,
                                       const std::pair<std::string, std::string>& b,
                                       const std::string& common) {
  const std::string path_a = kBench + "/results/" + a.second;
  const std::string path_b = kBench + "/results/" + b.second;
  ProcessResult r = CompareRuns({a.first + "=" + path_a, b.first + "=" + path_b});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (r.exit_code != 0) return r;
  EXPECT_NE(r.out.find(common), std::string::npos) << r.out;
  for (const auto& [run, path] : {std::pair{a.first, path_a}, std::pair{b.first, path_b}}) {
    const std::string table = testing::ReadFile(path);
    const double grid = After(table, "geomean candidate/cudnn over fa3_grid: ");
    const double all = After(table, "geomean candidate/cudnn over all: ");
    EXPECT_FALSE(std::isnan(grid) || std::isnan(all)) << path;
    EXPECT_NEAR(OwnGeomean(r.out, run, "grid"), grid, 0.002) << r.out;
    EXPECT_NEAR(OwnGeomean(r.out, run, "all"), all, 0.002) << r.out;
  }
  return r;
}

TEST(FaBenchToolsTest, CompareRunsAgreesWithAnchorSummaries) {
  const ProcessResult r = ExpectTwoResultsCompared(
      {"b", "hopper_v3b_h200.txt"}, {"c", "hopper_v3c_h200.txt"},
      "233 scenarios in every run with a cuDNN time (72 of the FA3 grid)");
  // The first run against itself.
  EXPECT_NE(r.out.find("b        grid       1.006      1.000       1.000"),
            std::string::npos)
      << r.out;
}

// The tables anchor.py prints since it times FA3 too (FA3 and c/best
// columns after the cuDNN and FA2 ones, per-class geomeans after the
// summary lines) are read the same way.
TEST(FaBenchToolsTest, CompareRunsReadsTablesWithFa3Columns) {
  ExpectTwoResultsCompared({"d", "hopper_v3d_h200.txt"}, {"e", "hopper_v3e_h200.txt"},
                           "309 scenarios in every run with a cuDNN time (72 of the FA3 grid)");
}

// The final runs' results files (v3p on) open with the run's summary:
// its geomean lines and the lowest scenarios' "scenario cand best ..."
// table come before the anchor table, which is the one read.
TEST(FaBenchToolsTest, CompareRunsReadsResultsThatOpenWithTheSummary) {
  ExpectTwoResultsCompared({"q", "hopper_v3q_h200.txt"}, {"r", "hopper_v3r_h200.txt"},
                           "309 scenarios in every run with a cuDNN time (72 of the FA3 grid)");
}

TEST(FaBenchToolsTest, CompareRunsRefusesInputWithoutATable) {
  const std::string path = testing::TempDir("compare_runs") + "/empty.txt";
  testing::WriteFile(path, "no table here\n");
  ProcessResult r = CompareRuns({"x=" + path, "y=" + path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no anchor table in " + path), std::string::npos)
      << r.err;
  r = CompareRuns({"just-a-path"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("want NAME=PATH"), std::string::npos) << r.err;
}

// pick_scenarios.py, which the device plans (bench/plans/*.sh) take their
// scenario lists from: task.json's names matching any glob, in task.json's
// order and each once; a glob that matches nothing is refused by name.
TEST(FaBenchToolsTest, PickScenariosKeepsTaskOrderAndRefusesAnEmptyGlob) {
  const std::string pick = kBench + "/pick_scenarios.py";
  ProcessResult r = testing::RunProcess(
      {"/usr/bin/env", "python3", pick, "grid_hd64_full_s51*", "grid_*_s512_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "grid_hd64_full_s512_bf16,grid_hd64_full_s512_f16,grid_hd64_causal_s512_bf16,"
            "grid_hd128_full_s512_bf16,grid_hd128_causal_s512_bf16,"
            "grid_hd256_full_s512_bf16,grid_hd256_causal_s512_bf16\n");
  r = testing::RunProcess({"/usr/bin/env", "python3", pick, "grid_*", "ragged_*hd80*"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no scenario of task.json matches ragged_*hd80*"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kseek
