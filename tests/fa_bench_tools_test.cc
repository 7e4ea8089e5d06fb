// The benchmark tools of kernels/flash_attention_fwd/bench, on the CPU.
// compare_runs.py on the anchor results
// kept in the repository: its per-run geomeans must agree with the ones
// anchor.py printed under each table (computed there from unrounded
// times), and input without an anchor table is refused by name.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "harness/src/compile.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using testing::ProcessResult;

const std::string kBench =
    testing::SourceDir() + "/kernels/flash_attention_fwd/bench";

// python3 bench/SCRIPT with `args`.
ProcessResult RunBench(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "python3", kBench + "/" + script};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(argv);
}

ProcessResult CompareRuns(const std::vector<std::string>& args) {
  return RunBench("compare_runs.py", args);
}

ProcessResult Timeline(const std::vector<std::string>& args) {
  return RunBench("timeline.py", args);
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

// --moved: the last run against the first row by row. Two small anchor
// tables (scenario cand cuDNN FA2 FA3 ...): the candidate's own change
// shows where it moved and the references did not, a machine that runs
// everything 10% faster moves nothing, and a reference's outlier (FA3 at
// 4x) is named as such rather than counted as the candidate's loss.
TEST(FaBenchToolsTest, CompareRunsMovedTellsTheCandidateFromTheMachine) {
  const std::string dir = testing::TempDir("compare_runs_moved");
  const std::string head =
      "scenario  cand  cuDNN  FA2  FA3  c/cuDNN  c/FA2  c/FA3  c/best  (TFLOP/s)\n";
  testing::WriteFile(dir + "/old.txt", head +
                                           "grid_a 100 90 50 95\n"
                                           "grid_b 200 180 90 190\n"
                                           "ragged_c 300 250 120 280\n"
                                           "decode_d 10 9 5 9.5\n"
                                           "geomean 1 1 1 1\n");
  // The machine 10% faster for all three; grid_b the candidate's own 5%
  // gain on top, decode_d its own 5% loss; ragged_c FA3 at 4x its time.
  testing::WriteFile(dir + "/new.txt", head +
                                           "grid_a 110 99 55 104.5\n"
                                           "grid_b 231 198 99 209\n"
                                           "ragged_c 330 275 132 77\n"
                                           "decode_d 10.45 9.9 5.5 10.45\n"
                                           "geomean 1 1 1 1\n");
  const ProcessResult r =
      CompareRuns({"old=" + dir + "/old.txt", "new=" + dir + "/new.txt", "--moved", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("new against old, row by row (4 scenarios, 4 with FA3 in both)"),
            std::string::npos)
      << r.out;
  // Lowest: decode_d at 0.95; highest: ragged_c (its FA3 slowed, so the
  // candidate reads 2x against the references), grid_b's 1.05 not shown
  // (N = 1).
  const std::regex lowest(
      "lowest 1:\\n[^\\n]*\\ndecode_d +0\\.950 +1\\.045 +1\\.100 +1\\.100\\n");
  EXPECT_TRUE(std::regex_search(r.out, lowest)) << r.out;
  const std::regex highest("highest 1:\\n[^\\n]*\\nragged_c +[0-9.]+ +1\\.100 +1\\.100 +0\\.275\\n");
  EXPECT_TRUE(std::regex_search(r.out, highest)) << r.out;
  const std::regex outlier("its outlier\\):\\n[^\\n]*\\nragged_c [^\\n]*\\n*$");
  EXPECT_TRUE(std::regex_search(r.out, outlier)) << r.out;
  // Neither grid row is named row by row: grid_a moved with the machine,
  // grid_b's gain is below ragged_c's ratio.
  const std::string by_row = r.out.substr(r.out.find("row by row"));
  EXPECT_EQ(by_row.find("grid_"), std::string::npos) << r.out;
  // --json: the same figures for scripts.
  const ProcessResult j = CompareRuns(
      {"old=" + dir + "/old.txt", "new=" + dir + "/new.txt", "--moved", "1", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  const nlohmann::json& m = doc.at("moved");
  EXPECT_EQ(m.at("scenarios"), 4);
  ASSERT_EQ(m.at("lower").size(), 1u) << j.out;
  EXPECT_EQ(m.at("lower")[0].at("scenario"), "decode_d");
  EXPECT_NEAR(m.at("lower")[0].at("cand_over_refs").get<double>(), 0.95, 1e-9);
  ASSERT_EQ(m.at("outliers").size(), 1u) << j.out;
  EXPECT_EQ(m.at("outliers")[0].at("scenario"), "ragged_c");
  EXPECT_NEAR(m.at("outliers")[0].at("fa3").get<double>(), 0.275, 1e-9);
  EXPECT_NEAR(m.at("geomean").at("cudnn").get<double>(), 1.1, 1e-9);
  // A count below one and a single run are refused by name.
  ProcessResult bad = CompareRuns({"old=" + dir + "/old.txt", "new=" + dir + "/new.txt", "--moved", "0"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--moved wants a count of 1 or more"), std::string::npos) << bad.err;
  bad = CompareRuns({"old=" + dir + "/old.txt", "--moved", "2"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--moved wants two runs or more"), std::string::npos) << bad.err;
}

// pick_scenarios.py, which the device plans (bench/plans/*.sh) take their
// scenario lists from: task.json's names matching any glob, in task.json's
// order and each once; a glob that matches nothing is refused by name.
TEST(FaBenchToolsTest, PickScenariosKeepsTaskOrderAndRefusesAnEmptyGlob) {
  ProcessResult r = RunBench("pick_scenarios.py", {"grid_hd64_full_s51*", "grid_*_s512_bf16"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "grid_hd64_full_s512_bf16,grid_hd64_full_s512_f16,grid_hd64_causal_s512_bf16,"
            "grid_hd128_full_s512_bf16,grid_hd128_causal_s512_bf16,"
            "grid_hd256_full_s512_bf16,grid_hd256_causal_s512_bf16\n");
  r = RunBench("pick_scenarios.py", {"grid_*", "ragged_*hd80*"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no scenario of task.json matches ragged_*hd80*"), std::string::npos)
      << r.err;
}

// timeline.py --parse on a trace as --save-traces writes it: the samples
// are cut at the pad's spin kernels, the next sample's flush (a fill
// kernel) left out, and per backend the medians of the call's span, its
// wait after the spin and each kernel's duration and gap printed; the
// dependent kernel's overlap shows as a negative gap. A trace without the
// backends' order is refused by name.
TEST(FaBenchToolsTest, TimelineParsesASavedTrace) {
  const std::string dir = testing::TempDir("timeline");
  auto kernel = [](const std::string& name, double ts, double dur) {
    return "{\"cat\": \"kernel\", \"name\": \"" + name + "\", \"ts\": " +
           std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}";
  };
  const std::string fill = "void at::native::vectorized_elementwise_kernel<4, "
                           "at::native::FillFunctor<unsigned char>>(int)";
  const std::string attn = "void (anonymous namespace)::AttentionForwardWgmma<__nv_bfloat16, "
                           "256, 2>(Problem)";
  const std::string comb = "void (anonymous namespace)::CombineSplits<__nv_bfloat16, 256, 1>"
                           "(Problem)";
  // Four samples, order def, p15, p15, def; each: flush, spin, the call.
  // def: attention 60 us, combine 10 us 2 us after it; p15: attention 64,
  // combine starting 1 us before the attention's end.
  std::string events;
  const char* order[] = {"def", "p15", "p15", "def"};
  double t = 0;
  for (const char* b : order) {
    const bool dep = std::string(b) == "p15";
    events += kernel(fill, t, 10) + ", " + kernel("void at::cuda::(anonymous namespace)::spin_kernel(long)", t + 10, 300) + ", ";
    const double a0 = t + 313, a1 = a0 + (dep ? 64 : 60);
    events += kernel(attn, a0, a1 - a0) + ", " + kernel(comb, dep ? a1 - 1 : a1 + 2, 10) + ", ";
    events += "{\"cat\": \"cpu_op\", \"name\": \"aten::zero_\", \"ts\": " + std::to_string(t) + "}, ";
    t += 1000;
  }
  events.resize(events.size() - 2);
  const std::string trace = dir + "/prefill_q256.json";
  testing::WriteFile(trace, "{\"traceEvents\": [" + events +
                                "], \"kseek_order\": [\"def\", \"p15\", \"p15\", \"def\"], "
                                "\"kseek_flops\": 72000000}");
  ProcessResult r = Timeline({"--parse", trace});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // 72 MFLOP in 72 us: 1.0 TFLOP/s.
  EXPECT_NE(r.out.find("def      span     72.0 (   1.0 TFLOP/s) wait    3.0  [2]  "
                       "AttentionForwardWgmma 60.0  CombineSplits 10.0 (gap +2.0)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("p15      span     73.0 (   1.0 TFLOP/s) wait    3.0  [2]  "
                       "AttentionForwardWgmma 64.0  CombineSplits 10.0 (gap -1.0)"),
            std::string::npos)
      << r.out;
  // The same rows for scripts: --json - prints only the JSON.
  r = Timeline({"--parse", trace, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  ASSERT_EQ(doc["rows"].size(), 2u) << r.out;
  const nlohmann::json& def = doc["rows"][0];
  EXPECT_EQ(def["scenario"], "prefill_q256");
  EXPECT_EQ(def["backend"], "def");
  EXPECT_DOUBLE_EQ(def["span_us"].get<double>(), 72.0);
  EXPECT_DOUBLE_EQ(def["wait_us"].get<double>(), 3.0);
  EXPECT_EQ(def["samples"], 2);
  EXPECT_DOUBLE_EQ(def["tflops"].get<double>(), 1.0);
  ASSERT_EQ(def["kernels"].size(), 2u);
  EXPECT_EQ(def["kernels"][0]["name"], "AttentionForwardWgmma");
  EXPECT_TRUE(def["kernels"][0]["gap_us"].is_null());
  EXPECT_DOUBLE_EQ(def["kernels"][1]["dur_us"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(def["kernels"][1]["gap_us"].get<double>(), 2.0);
  const nlohmann::json& p15 = doc["rows"][1];
  EXPECT_EQ(p15["backend"], "p15");
  EXPECT_DOUBLE_EQ(p15["kernels"][1]["gap_us"].get<double>(), -1.0);

  testing::WriteFile(trace, "{\"traceEvents\": [" + events + "]}");
  r = Timeline({"--parse", trace});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("has no kseek_order"), std::string::npos) << r.err;
  r = Timeline({"--parse", dir + "/missing.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read the trace " + dir + "/missing.json"), std::string::npos)
      << r.err;
}

// A row of timeline.py's --json output: a backend's span on a scenario
// (no span where span_us <= 0, as for a backend that launched no kernel).
nlohmann::json SpanRow(const std::string& scenario, const std::string& backend, double span_us) {
  nlohmann::json row = {
      {"scenario", scenario}, {"backend", backend}, {"kernels", nlohmann::json::array()}};
  if (span_us > 0) row["span_us"] = span_us;
  return row;
}

// timeline.py --summary: the builds' spans against cuDNN's, the faster
// FA3's and the best's, a scenario without a backend's span left out of
// that column; an unreadable file is refused by name.
TEST(FaBenchToolsTest, TimelineSummaryGeomeansTheSpans) {
  const std::string dir = testing::TempDir("timeline_summary");
  // a: def 10, FA3 12 / 11, cuDNN 9; b: def 20, FA3 40 (num_splits 1 only),
  // cuDNN without kernels.
  const std::string path = dir + "/timeline.json";
  const nlohmann::json rows = {SpanRow("a", "def", 10),    SpanRow("a", "fa3_s1", 12),
                               SpanRow("a", "fa3_s0", 11), SpanRow("a", "cudnn", 9),
                               SpanRow("b", "def", 20),    SpanRow("b", "fa3_s1", 40),
                               SpanRow("b", "cudnn", 0)};
  testing::WriteFile(path, nlohmann::json{{"rows", rows}}.dump());
  ProcessResult r = Timeline({"--summary", path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // /cuDNN 9/10 over one scenario; /FA3 sqrt(11/10 * 40/20); /best
  // sqrt(9/10 * 40/20).
  EXPECT_NE(r.out.find("def         0.900 (  1)  1.483 (  2)  1.342 (  2)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("lowest against the best: a 0.900, b 2.000"), std::string::npos) << r.out;
  r = Timeline({"--summary", dir + "/missing.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read the rows of " + dir + "/missing.json"), std::string::npos)
      << r.err;
}

// anchor.py's table by the timeline, printed again from a saved
// anchor.json by timeline.py --anchor: the span ratios come from each
// row's spans (FA3 the faster of num_splits 1 and 0; a backend whose O
// disagreed left out of best), rows without spans count by their events,
// the events' geomeans stand beside, and each backend's events less its
// spans are summed up.
TEST(FaBenchToolsTest, TimelineAnchorTableByTheTimeline) {
  const std::string dir = testing::TempDir("timeline_anchor");
  // An anchor.py row: its events' ratios over FA3, cuDNN, FA2 and the best,
  // and its spans where given; cuDNN's O disagrees in row b.
  auto row = [](const std::string& name, const std::string& cls,
                const std::vector<double>& ratios, const nlohmann::json& spans) {
    nlohmann::json r = {{"name", name},
                        {"class", cls},
                        {"params", {{"head_dim", 128}}},
                        {"flops", 1e9},
                        {"fa3_s1_rel_l2_vs_candidate", 0.001},
                        {"fa3_s0_rel_l2_vs_candidate", 0.001},
                        {"cudnn_rel_l2_vs_candidate", name == "b" ? 1.0 : 0.001},
                        {"candidate_over_fa3", ratios[0]},
                        {"candidate_over_cudnn", ratios[1]},
                        {"candidate_over_fa2", ratios[2]},
                        {"candidate_over_best", ratios[3]}};
    if (!spans.is_null()) r["span_us"] = spans;
    return r;
  };
  // a: spans give FA3 11/10, cuDNN 9/10, best 0.9. b: FA3 30/20, cuDNN's O
  // wrong (out of best), best 1.5. c: no spans, its events count.
  nlohmann::json row_a = row("a", "decode", {1.1, 0.9, 2.0, 0.9},
                         {{"candidate", 10}, {"fa3_s1", 12}, {"fa3_s0", 11}, {"cudnn", 9}, {"fa2", 20}});
  row_a["candidate_ms"] = 0.0125;
  row_a["cudnn_ms"] = 0.01;
  nlohmann::json row_b = row("b", "decode", {1.2, 1.5, 2.0, 1.2},
                         {{"candidate", 20}, {"fa3_s0", 30}, {"cudnn", 40}, {"fa2", 40}});
  row_b["candidate_ms"] = 0.0235;
  const nlohmann::json row_c = row("grid_c", "grid hd128 full", {1.05, 1.1, 2.0, 1.05}, nullptr);
  const std::string path = dir + "/anchor.json";
  testing::WriteFile(path, nlohmann::json{{"timing", {{"spans_under_us", 200}, {"span_samples", 20}}},
                                          {"scenarios", {row_a, row_b, row_c}}}
                               .dump());
  ProcessResult r = Timeline({"--anchor", path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // decode: events sqrt(1.1 * 1.2), spans sqrt(1.1 * 1.5); cuDNN sqrt(0.9 *
  // 1.5) and sqrt(0.9 * 2); FA2 2 both; best sqrt(0.9 * 1.2), sqrt(0.9 * 1.5).
  EXPECT_NE(r.out.find("decode                    2     2     1.149      1.285     1.162      1.342"
                       "     2.000      2.000     1.039      1.162"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fa3_grid                  1     0     1.050      1.050"), std::string::npos)
      << r.out;
  // Lowest by the GPU's time: a by span, c by events, b by span.
  const size_t a = r.out.find("\na  "), c = r.out.find("\ngrid_c "), b = r.out.find("\nb  ");
  ASSERT_TRUE(a != std::string::npos && b != std::string::npos && c != std::string::npos)
      << r.out;
  EXPECT_TRUE(a < c && c < b) << r.out;
  EXPECT_NE(r.out.find("span   0.900"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("events   1.050"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("span   1.500"), std::string::npos) << r.out;
  // Events less spans: the candidate 2.5 and 3.5 us, cuDNN 1 us (a only).
  EXPECT_NE(r.out.find("candidate 3.0 (2.5 to 3.5, 2); cudnn 1.0 (1.0 to 1.0, 1)"),
            std::string::npos)
      << r.out;
  // A file without spans is refused by name.
  testing::WriteFile(path, "{\"timing\": {}, \"scenarios\": []}");
  r = Timeline({"--anchor", path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(path + " has no spans"), std::string::npos) << r.err;
}

// timeline.py --offsets joins one run's variants.json (CUDA events; cuDNN
// through a build's over_cudnn) with its timeline.json (spans): per
// scenario and backend the events' time less the span, and the medians.
TEST(FaBenchToolsTest, TimelineOffsetsJoinEventsAndSpans) {
  const std::string dir = testing::TempDir("timeline_offsets");
  const std::string timeline = dir + "/timeline.json", variants = dir + "/variants.json";
  testing::WriteFile(timeline, nlohmann::json{{"rows",
                                               {SpanRow("a", "def", 17), SpanRow("a", "def2", 17.5),
                                                SpanRow("a", "cudnn", 18), SpanRow("b", "def", 40),
                                                SpanRow("b", "def2", 40)}}}
                                   .dump());
  // a: def 22 us by events (cuDNN 22 x 1.0 = 22), def2 25; b: def 44, def2
  // 45 (no cuDNN span there).
  const nlohmann::json builds_a = {{"def", {{"ms", 0.022}, {"over_cudnn", 1.0}}},
                                   {"def2", {{"ms", 0.025}, {"over_cudnn", 0.88}}}};
  const nlohmann::json builds_b = {{"def", {{"ms", 0.044}}}, {"def2", {{"ms", 0.045}}}};
  testing::WriteFile(variants, nlohmann::json{{"rows",
                                               {{{"name", "a"}, {"builds", builds_a}},
                                                {{"name", "b"}, {"builds", builds_b}}}}}
                                   .dump());
  ProcessResult r =
      Timeline({"--offsets", timeline, variants});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("a                                                5.00     7.50     4.00"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b                                                4.00     5.00        -"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("median                                           4.50     6.25     4.00"),
            std::string::npos)
      << r.out;
  r = Timeline({"--offsets", timeline, dir + "/none.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read the rows of"), std::string::npos) << r.err;
}

// The device plans (bench/plans/*.sh) name only switches that hopper.cu or
// blackwell.cu define: a -D of a removed or misspelt switch would build the
// defaults under the variant's name and spend device time on a false
// comparison. run_variants.sh refuses such a variant by name before it
// compiles anything.
TEST(FaBenchToolsTest, PlansNameOnlySwitchesTheKernelsHave) {
  const std::string kernels = testing::SourceDir() + "/kernels/flash_attention_fwd";
  const std::string defined = testing::ReadFile(kernels + "/hopper.cu") +
                              testing::ReadFile(kernels + "/blackwell.cu");
  const std::regex name("KSEEK_FA_[A-Z0-9_]+");
  int plans = 0;
  std::set<std::string> checked;
  for (const auto& entry : std::filesystem::directory_iterator(kBench + "/plans")) {
    if (entry.path().extension() != ".sh") continue;
    ++plans;
    const std::string text = testing::ReadFile(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) {
      const std::string sw = it->str();
      checked.insert(sw);
      EXPECT_NE(defined.find("#ifndef " + sw + "\n"), std::string::npos)
          << entry.path().filename().string() << " names " << sw
          << ", which neither kernel defines";
    }
  }
  EXPECT_GT(plans, 10);
  EXPECT_GT(checked.size(), 10u);

  const std::string out = testing::TempDir("run_variants");
  const ProcessResult r = testing::RunProcess(
      {"/usr/bin/env", "OUT=" + out,
       "FA_VARIANTS=def=kernels/flash_attention_fwd/hopper.cu;"
       "gone=kernels/flash_attention_fwd/hopper.cu -DKSEEK_FA_NO_SUCH_SWITCH=1",
       "bash", kBench + "/run_variants.sh"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("gone: kernels/flash_attention_fwd/hopper.cu has no switch "
                       "KSEEK_FA_NO_SUCH_SWITCH"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("== built"), std::string::npos) << r.out;  // nothing compiled
}

// run_variants.sh's FA_BUILD_ONLY and FA_PREBUILT: builds compiled on one
// machine and timed on another. A prebuilt folder that lacks a build, or
// holds one compiled for another spec (other flags), is refused by name
// before anything runs; with nvcc, a build made by FA_BUILD_ONLY (the
// library, its ptxas report, its spec) is taken as it is by FA_PREBUILT.
TEST(FaBenchToolsTest, RunVariantsTakesOnlyBuildsOfTheSameSpec) {
  const std::string dir = testing::TempDir("prebuilt");
  const std::string source = dir + "/tiny.cu";
  testing::WriteFile(source, "extern \"C\" __global__ void tiny_kernel(float* x) { x[0] = 1.f; }\n");
  auto run = [&](const std::vector<std::string>& env) {
    std::vector<std::string> argv = {"/usr/bin/env", "OUT=" + dir + "/out", "FA_SCENARIOS=none"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"bash", kBench + "/run_variants.sh"});
    return testing::RunProcess(argv);
  };
  const std::string spec = "tiny=" + source;

  // A folder by hand: the spec it names is not the one asked for.
  const std::string fake = dir + "/fake";
  std::filesystem::create_directories(fake);
  testing::WriteFile(fake + "/tiny.so", "not a library");
  testing::WriteFile(fake + "/tiny.ptxas.txt", "");
  testing::WriteFile(fake + "/tiny.spec", spec + " -DTINY_OTHER=1");
  ProcessResult r = run({"FA_VARIANTS=" + spec, "FA_PREBUILT=" + fake});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("tiny: " + fake + "/tiny.so was built for '" + spec +
                       " -DTINY_OTHER=1', not '" + spec + "'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("== built"), std::string::npos) << r.out;
  r = run({"FA_VARIANTS=other=" + source, "FA_PREBUILT=" + fake});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("other: no " + fake + "/other.so"), std::string::npos) << r.err;

  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
  const std::string built = dir + "/built";
  r = run({"FA_VARIANTS=" + spec, "FA_BUILD_ONLY=" + built});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("== built into " + built), std::string::npos) << r.out;
  EXPECT_EQ(testing::ReadFile(built + "/tiny.spec"), spec);
  EXPECT_TRUE(std::filesystem::exists(built + "/tiny.ptxas.txt"));
  const std::string library = testing::ReadFile(built + "/tiny.so");
  EXPECT_EQ(library.substr(0, 4), "\x7f" "ELF");
  r = run({"FA_VARIANTS=" + spec, "FA_PREBUILT=" + built});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("== built 1 variant(s) in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(prebuilt in " + built + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-- tiny: nvcc exit 0"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/builds.tgz"));
}

// run_plan.sh's candidate_kernel, the file eval_candidate.sh and final.sh
// run: hopper.cu itself without FA_DEFINES; with them, a copy whose first
// lines set the switches and whose rest is hopper.cu unchanged; a word
// that is not NAME=NUMBER, or a switch hopper.cu lacks, refused by name
// with no file printed.
TEST(FaBenchToolsTest, CandidateKernelSetsOnlySwitchesTheKernelHas) {
  const std::string dir = testing::TempDir("candidate_kernel");
  auto candidate = [&](const std::string& defines) {
    return testing::RunProcess(
        {"/usr/bin/env", "FA_DEFINES=" + defines, "bash", "-c",
         "cd '" + testing::SourceDir() + "' && source " + kBench +
             "/plans/run_plan.sh && candidate_kernel '" + dir + "'"});
  };
  ProcessResult r = candidate("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kernels/flash_attention_fwd/hopper.cu\n");

  r = candidate("KSEEK_FA_TAIL_SPLIT=6 KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=4096");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, dir + "/hopper.cu\n");
  EXPECT_EQ(testing::ReadFile(dir + "/hopper.cu"),
            "#define KSEEK_FA_TAIL_SPLIT 6\n#define KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS 4096\n" +
                testing::ReadFile(testing::SourceDir() +
                                  "/kernels/flash_attention_fwd/hopper.cu"));

  r = candidate("KSEEK_FA_TAIL_SPLIT=6 KSEEK_FA_NO_SUCH_SWITCH=1");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("has no switch KSEEK_FA_NO_SUCH_SWITCH"), std::string::npos) << r.err;

  r = candidate("KSEEK_FA_TAIL_SPLIT");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("NAME=NUMBER words, not 'KSEEK_FA_TAIL_SPLIT'"), std::string::npos)
      << r.err;
}

// ptx_same.sh, which the notes' "PTX identical" claims come from: the same
// file twice is identical (exit 0), a copy with one switch's default
// changed differs (exit 1, the diff named), a missing file is refused by
// name (exit 2).
TEST(FaBenchToolsTest, PtxSameTellsAChangedKernelFromTheSame) {
  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
  const std::string kernel = testing::SourceDir() + "/kernels/flash_attention_fwd/hopper.cu";
  const std::string dir = testing::TempDir("ptx_same");
  const std::string tool = kBench + "/ptx_same.sh";
  ProcessResult r = testing::RunProcess(
      {"/usr/bin/env", "PTX_SAME_DIR=" + dir + "/same", "bash", tool, kernel, kernel});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PTX identical ("), std::string::npos) << r.out << r.err;

  std::string text = testing::ReadFile(kernel);
  const std::string from = "#define KSEEK_FA_WAIT_HINT_NS 1000000\n";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "update the switch this test changes";
  text.replace(at, from.size(), "#define KSEEK_FA_WAIT_HINT_NS 500000\n");
  const std::string changed = dir + "/hopper.cu";
  testing::WriteFile(changed, text);
  r = testing::RunProcess(
      {"/usr/bin/env", "PTX_SAME_DIR=" + dir + "/changed", "bash", tool, kernel, changed});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("PTX differs: "), std::string::npos) << r.err;
  EXPECT_NE(testing::ReadFile(dir + "/changed/ptx.diff").find("500000"), std::string::npos);

  r = testing::RunProcess({"bash", tool, kernel, dir + "/missing.cu"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no file " + dir + "/missing.cu"), std::string::npos) << r.err;
}

// final_results.py: a final run's $OUT into a results file: the header
// lines as comments with the GPU from anchor.log, final.log up to the
// anchor's JSON, then the anchor's and pad sweep's tables and the other
// outputs, in that order, Python's warnings (and the line after each)
// left out; a folder without the run's logs is refused by name.
TEST(FaBenchToolsTest, FinalResultsFileFromARunsOutput) {
  const std::string dir = testing::TempDir("final_results");
  testing::WriteFile(dir + "/final.log",
                     "== anchor: exit 0 in 300 s\n"
                     "geomean candidate/fa3 over fa3_grid: 1.040 (72 of 72 scenarios)\n"
                     "/x/profiler.py:224: UserWarning: Profiler clears events\n"
                     "  _warn_once(\n"
                     "wrote /tmp/t/anchor/anchor.json\n"
                     "geomean TFLOP/s after the JSON\n");
  testing::WriteFile(dir + "/anchor.log",
                     "device NVIDIA H200; torch 2.11; cuDNN 91900\nscenario cand\n");
  testing::WriteFile(dir + "/pad_sweep.log", "pad sweep: TFLOP/s per backend\n");
  testing::WriteFile(dir + "/streams.txt", "streams_check: all match (486 outputs)\n");
  const ProcessResult r =
      RunBench("final_results.py", {dir, "--header", "v9: a test", "--header", "the command"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "# v9: a test\n# the command\n# device NVIDIA H200\n"
            "# First the run's summary, then the anchor's table and the pad sweep's, then the "
            "other outputs (Python's warnings left out).\n"
            "== anchor: exit 0 in 300 s\n"
            "geomean candidate/fa3 over fa3_grid: 1.040 (72 of 72 scenarios)\n"
            "wrote /tmp/t/anchor/anchor.json\n"
            "== anchor table\ndevice NVIDIA H200; torch 2.11; cuDNN 91900\nscenario cand\n"
            "== pad sweep\npad sweep: TFLOP/s per backend\n"
            "== streams\nstreams_check: all match (486 outputs)\n");

  // With the GPU's ceilings measured around the run (ceilings.txt): the
  // grid's s16384 rows of the anchor's first table as % of the matmul's
  // mean median, before the other outputs; rows of later tables ignored.
  testing::WriteFile(dir + "/anchor.log",
                     "device NVIDIA H100; torch 2.11; cuDNN 91900\n"
                     "scenario   cand  cuDNN  FA2  FA3  c/FA3\n"
                     "grid_hd128_full_s512_bf16  500.0  480.0  300.0  490.0  1.020\n"
                     "grid_hd128_full_s16384_bf16  780.0  650.0  320.0  740.0  1.054\n"
                     "\n"
                     "scenario  by  c/best  c/FA3  c/cuDNN\n"
                     "grid_hd256_full_s16384_bf16  span  0.9  0.9  0.9\n");
  testing::WriteFile(dir + "/ceilings.txt",
                     "ceilings (before) on NVIDIA H100: bf16 matmul 8192^3 random 760.0 TFLOP/s "
                     "median, 770.0 best; device copy of 2 GiB 2.98 TB/s median\n"
                     "ceilings (after) on NVIDIA H100: bf16 matmul 8192^3 random 800.0 TFLOP/s "
                     "median, 790.0 best; device copy of 2 GiB 2.97 TB/s median\n");
  const ProcessResult c = RunBench("final_results.py", {dir});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const size_t at = c.out.find("== against the matmul\n");
  ASSERT_NE(at, std::string::npos) << c.out;
  EXPECT_LT(at, c.out.find("== ceilings\n")) << c.out;
  const std::string part = c.out.substr(at, c.out.find("== ceilings\n") - at);
  EXPECT_NE(part.find("bf16 matmul 780.0 TFLOP/s (mean of 2 medians; best 790.0)"),
            std::string::npos)
      << part;
  // 780 / 780 = 100.0%, 740 -> 94.9%, 650 -> 83.3%.
  EXPECT_NE(part.find("grid_hd128_full_s16384_bf16"), std::string::npos) << part;
  EXPECT_NE(part.find("780.0    740.0    650.0   100.0%   94.9%   83.3%"), std::string::npos)
      << part;
  EXPECT_EQ(part.find("s512"), std::string::npos) << part;
  EXPECT_EQ(part.find("hd256"), std::string::npos) << part;  // a later table's row

  testing::WriteFile(dir + "/ceilings.txt", "ceilings.py: skipped: no CUDA device\n");
  const ProcessResult none = RunBench("final_results.py", {dir});
  ASSERT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_NE(none.out.find("== against the matmul\nno bf16 matmul figure in ceilings.txt\n"),
            std::string::npos)
      << none.out;

  const std::string empty = testing::TempDir("final_results_empty");
  const ProcessResult bad = RunBench("final_results.py", {empty});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("has no final.log, anchor.log, pad_sweep.log"), std::string::npos)
      << bad.err;
}

// item_trace.py --parse on records laid out as hopper.cu's trace build
// writes them (KSEEK_FA_TRACE; word 0: query row, key tiles << 32, SM
// << 48, kind << 56; then the global timer at the round's start and end,
// the SM's clock at its points, head and batch). At one cycle per ns:
// block 0 runs two consumer rounds (4 and 2 key tiles), block 1 one; a
// record whose word 0 is empty (a round past the last item) is left out.
TEST(FaBenchToolsTest, ItemTraceSummarizesSavedRecords) {
  const std::string dir = testing::TempDir("item_trace");
  auto id = [](uint64_t q0, uint64_t tiles, uint64_t sm, uint64_t kind) {
    return std::to_string(q0 | tiles << 32 | sm << 48 | kind << 56);
  };
  const std::string records =
      "[[0,0,1," + id(0, 4, 5, 1) + ",1000,8000,0,500,1500,2500,6500,7000,3],"
      "[0,1,1," + id(128, 2, 5, 1) + ",8000,11700,7000,7100,7200,8200,10200,10700,3],"
      "[1,0,1," + id(256, 4, 9, 1) + ",1000,8500,100,1100,2100,3100,7100,7600,3],"
      "[1,1,1,0,9000,0,7600,0,0,0,0,0,0],"
      "[0,0,2," + id(0, 4, 5, 2) + ",900,3000,0,100,300,400,2000,0,3]]";
  const std::string raw = dir + "/raw.json";
  testing::WriteFile(raw, "{\"scenario\": \"synthetic\", \"layout\": [4, 4, 10], "
                          "\"events_us\": 12.5, \"records\": " + records + "}");
  ProcessResult r = RunBench("item_trace.py", {"--parse", raw, "--bins", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* line :
       {"== synthetic: span 10.8 us by the global timer, events 12.5 us; clock 1000 MHz; "
        "2 blocks, 3 rounds (at most 2 per block); ramp median 0.10 / max 0.10 us, "
        "tail median 0.00 / max 3.20 us",
        "  q                                0.50     1.00     8.8%",
        "  loop                             4.00     4.00    54.9%",
        "  per key tile (s + loop over tiles): 1.250 us",
        // s + loop: 5.0 us at 4 tiles (twice), 3.0 at 2.
        "  s + loop fitted to the key tiles: 1.000 us per tile, plus 1.00 us per item",
        "      4 tiles      2   0.75 / 1.00 / 1.00 / 4.00 / 0.50",
        "  to_last_v                        1.60     1.60",
        // Bin 0 (0.9-3.6 us): both blocks wait 1.5 + 2.0 us of 5.4.
        "       0.0    64.8  31.5   0.0   3.7"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  r = RunBench("item_trace.py", {"--parse", raw, "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"rounds\": 3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("== synthetic"), std::string::npos) << r.out;  // JSON only

  // One tile count: no fit.
  testing::WriteFile(raw, "{\"layout\": [4, 4, 10], \"records\": [[0,0,1," + id(0, 4, 5, 1) +
                              ",1000,8000,0,500,1500,2500,6500,7000,3]]}");
  r = RunBench("item_trace.py", {"--parse", raw, "--bins", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  s + loop fitted to the key tiles: no fit (one tile count)\n"),
            std::string::npos)
      << r.out;

  // Twenty tile counts (1-20, one block each, s 1 us and the loop 1 us per
  // tile) in at most 5 rows: four counts a row, the medians over their rounds.
  std::string many;
  for (uint64_t t = 1; t <= 20; ++t) {
    const uint64_t c4 = 1200 + 1000 * t;  // s ends at 1200 ns, the loop t us later
    many += (many.empty() ? "" : ",") + std::string("[") + std::to_string(t - 1) + ",0,1," +
            id(128 * t, t, t, 1) + ",0," + std::to_string(c4 + 500) + ",0,100,200,1200," +
            std::to_string(c4) + "," + std::to_string(c4 + 500) + ",0]";
  }
  testing::WriteFile(raw, "{\"layout\": [20, 4, 10], \"records\": [" + many + "]}");
  r = RunBench("item_trace.py", {"--parse", raw, "--bins", "0", "--tile-rows", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* line :
       {"  s + loop fitted to the key tiles: 1.000 us per tile, plus 1.00 us per item",
        "        1-4 tiles      4   0.10 / 0.10 / 1.00 / 2.50 / 0.50",
        "      17-20 tiles      4   0.10 / 0.10 / 1.00 / 18.50 / 0.50"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  size_t rows = 0;
  for (size_t at = r.out.find(" tiles      4   "); at != std::string::npos;
       at = r.out.find(" tiles      4   ", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 5u) << r.out;
  r = RunBench("item_trace.py", {"--parse", raw, "--tile-rows", "0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--tile-rows must be at least 1"), std::string::npos) << r.err;

  testing::WriteFile(raw, "{\"layout\": [4, 4, 10], \"records\": [[1,1,1,0,9000,0,7600,0,0,0,0,0,0]]}");
  r = RunBench("item_trace.py", {"--parse", raw});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read the records of " + raw + ": no complete consumer round"),
            std::string::npos)
      << r.err;
}

// kernel_resources.py on a small kernel file with two of hopper.cu's
// kernel names: ptxas's figures per instance, and the dynamic shared
// memory from the file's own constants.
// sass_loops.py --waits on a saved SASS listing of two kernels, each with an item
// loop around a key-tile loop that holds a barrier's retry loop: the first
// waits for P V (W0) after its softmax, the second before it (what ptxas
// did in D = 192's tail-shares instance); a kernel the regex leaves out
// is not read.
TEST(FaBenchToolsTest, SassLoopsFindsThePvWaitBeforeTheSoftmax) {
  const std::string dir = testing::TempDir("sass_loops");
  auto kernel = [](const std::string& mangled, bool wait_first) {
    std::vector<std::string> body = {
        "MOV R1, c[0x0][0x28]",
        "HGMMA.64x112x16.F32.BF16 R120, gdesc[UR4], RZ, !UPT, gsb0",
        "HGMMA.64x192x16.F32.BF16 R24, R180, gdesc[UR8].tnspB, R24, gsb0",
        "WARPGROUP.DEPBAR.LE gsb0, 0x1",
        "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R3",
        "@!P0 BRA 0x40"};
    std::vector<std::string> softmax = {"FMNMX R5, R120, R121, !PT", "FMNMX R6, R122, R123, !PT",
                                        "MUFU.EX2 R7, R7"};
    if (wait_first) body.push_back("WARPGROUP.DEPBAR.LE gsb0, 0x0");
    body.insert(body.end(), softmax.begin(), softmax.end());
    if (!wait_first) body.push_back("WARPGROUP.DEPBAR.LE gsb0, 0x0");
    body.push_back("@P1 BRA 0x10");  // the key-tile loop
    body.push_back("@P2 BRA 0x0");   // the item loop
    body.push_back("EXIT");
    std::string text = "\t\tFunction : " + mangled + "\n";
    for (size_t i = 0; i < body.size(); ++i) {
      std::ostringstream addr;
      addr << std::hex << std::setw(4) << std::setfill('0') << i * 16;
      text += "        /*" + addr.str() + "*/                   " + body[i] +
              " ;   /* 0x000000000000 */\n";
    }
    return text;
  };
  const std::string sass = dir + "/k.sass";
  testing::WriteFile(
      sass, kernel("_ZN12_GLOBAL__N_121AttentionForwardWgmmaI13__nv_bfloat16Li192ELb0EEEvv", false) +
                kernel("_ZN12_GLOBAL__N_121AttentionForwardWgmmaI6__halfLi192ELb1EEEvv", true) +
                kernel("_ZN12_GLOBAL__N_113CombineSplitsILi128EEEvv", true));
  ProcessResult r =
      RunBench("sass_loops.py", {"--waits", sass, "--match", "AttentionForwardWgmma", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<nlohmann::json> loops;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) loops.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(loops.size(), 2u) << r.out;
  EXPECT_EQ(loops[0]["kernel"], "AttentionForwardWgmma<__nv_bfloat16, 192, false>");
  EXPECT_EQ(loops[0]["start"], "0x10");
  EXPECT_EQ(loops[0]["end"], "0xa0");
  EXPECT_EQ(loops[0]["events"], "H112g H192g W1 S Mx2 E W0");
  EXPECT_EQ(loops[0]["maxima_after_w0"], 0.0);
  EXPECT_FALSE(loops[0]["pv_wait_before_softmax"].get<bool>());
  EXPECT_EQ(loops[1]["kernel"], "AttentionForwardWgmma<__half, 192, true>");
  EXPECT_EQ(loops[1]["events"], "H112g H192g W1 S W0 Mx2 E");
  EXPECT_EQ(loops[1]["maxima_after_w0"], 1.0);
  EXPECT_TRUE(loops[1]["pv_wait_before_softmax"].get<bool>());

  r = RunBench("sass_loops.py", {"--waits", sass, "--match", "AttentionForwardWgmma"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("AttentionForwardWgmma<__half, 192, true> 0x10-0xa0: FMNMX after W0 100%  ** P V "
                       "wait before the softmax"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("key-tile loops with the P V wait before the softmax: 1"), std::string::npos)
      << r.out;

  r = RunBench("sass_loops.py", {"--waits", sass, "--match", "NoSuchKernel"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no function matches 'NoSuchKernel'"), std::string::npos) << r.err;
  r = RunBench("sass_loops.py", {"--waits", dir + "/missing.sass.gz"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read " + dir + "/missing.sass.gz"), std::string::npos) << r.err;
}

// cubin_events.py, sass_loops.py's input where there is no cuobjdump: two
// loops compiled here, each with two wgmma groups, the wait for the first
// (wait_group 1), a softmax-like pass (fmaxf, ex2) and the wait for all
// (wait_group 0), the last after a shared store of the pass's sum (ptxas
// keeps it after the pass) or before the pass in the PTX; the listing's
// back branch makes the loop, and only the second is marked. A file that is
// no cubin is refused by name.
TEST(FaBenchToolsTest, CubinEventsFindsWherePtxasPutTheWaits) {
  const std::string nvcc = CompilerFor(Target::kSm90a);
  if (nvcc.empty()) GTEST_SKIP() << "skipped: nvcc not found";
  const std::string dir = testing::TempDir("cubin_events");
  testing::WriteFile(dir + "/loop.cu", R"(#include <cstdint>
#define ACC8(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define MMA(d, scale) \
  asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " \
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, " #scale ", 1, 1, 0, 0;\n" \
               : ACC8(d), ACC8((d + 8)) : "l"(da), "l"(db)); \
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory")
template <bool kEarly>
__global__ void Loop(float* out, uint64_t da, uint64_t db, int n) {
  __shared__ float sum[128];
  float s[16] = {}, o[16] = {}, m = -1e30f, l = 0.f;
#pragma unroll 1
  for (int it = 0; it < n; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    MMA(s, 0);
    MMA(o, 1);
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    if (kEarly) asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 16; ++i) m = fmaxf(m, s[i]);
    for (int i = 0; i < 16; ++i) {
      float p;
      asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(p) : "f"(s[i] - m));
      l += p;
    }
    sum[threadIdx.x] = l;
    if (!kEarly) asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    da += 2 * (it + 1);
  }
  for (int i = 0; i < 16; ++i) out[threadIdx.x * 16 + i] = o[i] * sum[threadIdx.x ^ 1];
}
template __global__ void Loop<false>(float*, uint64_t, uint64_t, int);
template __global__ void Loop<true>(float*, uint64_t, uint64_t, int);
)");
  ProcessResult r = testing::RunProcess({nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-cubin",
                                         "-O3", "-o", dir + "/loop.cubin", dir + "/loop.cu"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = RunBench("cubin_events.py", {dir + "/loop.cubin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // every branch target inside its function
  const std::string sass = dir + "/loop.sass";
  testing::WriteFile(sass, r.out);
  EXPECT_NE(r.out.find("HGMMA.64x32x16, gsb0 ;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("WARPGROUP.DEPBAR.LE gsb0, 0x1 ;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MUFU.EX2 ;"), std::string::npos) << r.out;

  r = RunBench("sass_loops.py", {"--waits", sass, "--match", "Loop", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<std::string, nlohmann::json> loops;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    loops[j["kernel"].get<std::string>()] = j;
  }
  ASSERT_EQ(loops.size(), 2u) << r.out;
  const nlohmann::json& late = loops["Loop<false>"];
  const nlohmann::json& early = loops["Loop<true>"];
  EXPECT_EQ(late["events"], "H32gx2 W1 Mx16 Ex16 W0") << r.out;  // each wgmma its own group
  EXPECT_FALSE(late["pv_wait_before_softmax"].get<bool>());
  EXPECT_TRUE(early["pv_wait_before_softmax"].get<bool>()) << r.out;
  EXPECT_GT(early["maxima_after_w0"].get<double>(), 0.9);
  EXPECT_EQ(early["spill_instructions"], 0);
  // The loop is the range of its back branch.
  const std::string back = "BRA " + late["start"].get<std::string>() + " ;";
  EXPECT_NE(testing::ReadFile(sass).find(back), std::string::npos) << back;

  r = RunBench("cubin_events.py", {dir + "/loop.cu"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read " + dir + "/loop.cu: not an ELF64 file"), std::string::npos)
      << r.err;
}

TEST(FaBenchToolsTest, KernelResourcesPerInstance) {
  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: nvcc not found";
  const std::string dir = testing::TempDir("kernel_resources");
  testing::WriteFile(dir + "/small.cu", R"(#include "kernelseek/abi.h"
namespace {
constexpr int kCombineWarps = 8;
template <int D, int R>
struct DecodeConfig {
  static constexpr int kSmemBytes = D * R * 100;
};
template <typename T, int D, int R, int KD>
__global__ void AttentionDecode(T* o) {
  extern __shared__ float s[];
  s[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  o[threadIdx.x] = T(s[threadIdx.x ^ 1] * KD);
}
template <typename T, int D, int kInFlight>
__global__ void CombineSplits(T* o) { o[threadIdx.x] = T(D + kInFlight); }
}  // namespace
extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  float* o = static_cast<float*>(a->tensors[0].data);
  AttentionDecode<float, 64, 2, 48><<<1, 32, DecodeConfig<64, 2>::kSmemBytes>>>(o);
  CombineSplits<float, 128, 4><<<1, 32>>>(o);
  return 0;
}
)");
  const ProcessResult r = RunBench(
      "kernel_resources.py", {"--kernel", dir + "/small.cu", "--kseek", testing::BinDir() + "/kseek",
                              "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["kernel"], "AttentionDecode");
  EXPECT_EQ(lines[0]["template"], nlohmann::json({"64", "2", "48"}));
  EXPECT_EQ(lines[0]["types"], nlohmann::json({"float"}));
  EXPECT_EQ(lines[0]["dynamic_smem"], 12800);
  EXPECT_GT(lines[0]["registers"].get<int>(), 0);
  EXPECT_EQ(lines[0]["barriers"], 1);
  EXPECT_EQ(lines[1]["kernel"], "CombineSplits");
  EXPECT_EQ(lines[1]["dynamic_smem"], 8 * 128 * 4);
  EXPECT_EQ(lines[1]["spill_stores"], 0);

  const ProcessResult bad = RunBench("kernel_resources.py",
                                     {"--kernel", dir + "/missing.cu", "--kseek",
                                      testing::BinDir() + "/kseek"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("kseek compile failed"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kseek
