// `kseek` as a user runs it: real child processes, exit codes, messages
// that name the cause, the human table and the JSON verdict.
#include <filesystem>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using nlohmann::json;
using testing::RunProcess;

std::string Kseek() { return testing::BinDir() + "/kseek"; }
std::string Softmax() { return testing::SourceDir() + "/kernels/softmax"; }
std::string FastHost() { return Softmax() + "/fast_host.cc"; }

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunProcess({Kseek()}).exit_code, 2);
  auto unknown = RunProcess({Kseek(), "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
  auto help = RunProcess({Kseek(), "eval", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: kseek eval"), std::string::npos);

  auto bad_flag = RunProcess({Kseek(), "eval", "--task", Softmax(), "--colour=red", FastHost()});
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_NE(bad_flag.err.find("unknown flag --colour"), std::string::npos) << bad_flag.err;
  auto bad_value = RunProcess({Kseek(), "eval", "--task", Softmax(), "--seed=abc", FastHost()});
  EXPECT_EQ(bad_value.exit_code, 2);
  EXPECT_NE(bad_value.err.find("--seed"), std::string::npos) << bad_value.err;
  auto no_task = RunProcess({Kseek(), "eval", FastHost()});
  EXPECT_EQ(no_task.exit_code, 2);
  EXPECT_NE(no_task.err.find("--task is required"), std::string::npos);
  auto no_kernel = RunProcess({Kseek(), "eval", "--task", Softmax()});
  EXPECT_EQ(no_kernel.exit_code, 2);
  auto missing_kernel = RunProcess({Kseek(), "eval", "--task", Softmax(), "/nonexistent/k.cc"});
  EXPECT_EQ(missing_kernel.exit_code, 2);
  EXPECT_NE(missing_kernel.err.find("/nonexistent/k.cc: cannot read"), std::string::npos);
  auto bad_target = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "sm_80", FastHost()});
  EXPECT_EQ(bad_target.exit_code, 2);
  EXPECT_NE(bad_target.err.find("unknown target 'sm_80'"), std::string::npos) << bad_target.err;
  auto bad_scenario =
      RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios", "nope", FastHost()});
  EXPECT_EQ(bad_scenario.exit_code, 2);
  EXPECT_NE(bad_scenario.err.find("'nope' is neither a file nor a scenario"), std::string::npos)
      << bad_scenario.err;
}

// In a folder holding task.json and a config naming a target (as a session
// workspace does), plain `kseek eval KERNEL` uses both; explicit flags win.
TEST(Cli, EveryBinaryPrintsItsVersion) {
  for (const char* binary : {"kseek", "kernelseekd", "kseek-worker"}) {
    auto version = RunProcess({testing::BinDir() + "/" + binary, "--version"});
    EXPECT_EQ(version.exit_code, 0) << binary << ": " << version.err;
    EXPECT_EQ(version.out, std::string(binary) + " " + KSEEK_VERSION + " (protocol kernelseek.v1)\n");
  }
}

TEST(Cli, EvalDefaultsToTheFoldersTaskAndTheConfigsTarget) {
  std::string dir = testing::TempDir("cli-defaults");
  std::filesystem::copy(Softmax(), dir, std::filesystem::copy_options::recursive |
                                            std::filesystem::copy_options::overwrite_existing);
  std::filesystem::create_directories(dir + "/.kernelseek");
  testing::WriteFile(dir + "/.kernelseek/client.json", R"({"target": "host"})");
  auto in_dir = [&](const std::string& args) {
    return RunProcess({"/bin/bash", "-c", "cd '" + dir + "' && '" + Kseek() + "' eval --local " + args});
  };
  auto plain = in_dir("--scenarios r1_c1_f32_host,r64_c33_f32_host --no-timing --json fast_host.cc");
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  json v = json::parse(plain.out);
  EXPECT_EQ(v["task"], "softmax");
  EXPECT_EQ(v["target"], "host");  // the task's first target is sm_90a
  EXPECT_EQ(v["scenarios"].size(), 2u);

  auto flag_wins = in_dir("--target sm_80 fast_host.cc");
  EXPECT_EQ(flag_wins.exit_code, 2);
  EXPECT_NE(flag_wins.err.find("--target: unknown target 'sm_80'"), std::string::npos)
      << flag_wins.err;
  testing::WriteFile(dir + "/.kernelseek/client.json", R"({"target": "sm_80"})");
  auto bad_config = in_dir("fast_host.cc");
  EXPECT_EQ(bad_config.exit_code, 2);
  EXPECT_NE(bad_config.err.find("\"target\" of .kernelseek/client.json: unknown target 'sm_80'"),
            std::string::npos)
      << bad_config.err;
  // An explicit --task from a folder without task.json still works.
  auto elsewhere = RunProcess({"/bin/bash", "-c",
                               "cd '" + dir + "/.kernelseek' && '" + Kseek() + "' eval --local --task '" +
                                   Softmax() + "' --target host --scenarios r1_c1_f32_host "
                                   "--no-timing --json '" + FastHost() + "'"});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
}

TEST(Cli, MalformedTaskNamesFileAndField) {
  std::string dir = testing::TempDir("cli-task");
  std::filesystem::copy(Softmax(), dir, std::filesystem::copy_options::recursive |
                                            std::filesystem::copy_options::overwrite_existing);
  json task = json::parse(testing::ReadFile(dir + "/task.json"));
  task["tensors"][0]["shape"][1] = "cols +* 2";
  testing::WriteFile(dir + "/task.json", task.dump(2));
  auto r = RunProcess({Kseek(), "eval", "--task", dir, "--target", "host", FastHost()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/task.json: tensors[0].shape[1]"), std::string::npos) << r.err;
}

TEST(Cli, BadScenarioFileIsRefused) {
  std::string dir = testing::TempDir("cli-scen");
  testing::WriteFile(dir + "/extra.json", R"([{"name": "x", "params": {"rows": 3}}])");
  auto r = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios",
                       dir + "/extra.json", FastHost()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + "/extra.json: [0].params"), std::string::npos) << r.err;
}

TEST(Cli, EvaluatesAHostKernelWithExtraScenarios) {
  std::string dir = testing::TempDir("cli-eval");
  // Scenarios the task file does not list: the kernel must compute the function.
  testing::WriteFile(dir + "/extra.json", R"({"scenarios": [
      {"name": "odd_7x5", "params": {"rows": 7, "cols": 5, "dtype": "f32"}},
      {"name": "odd_3x1000_bf16", "params": {"rows": 3, "cols": 1000, "dtype": "bf16"}}]})");
  auto r = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios",
                       dir + "/extra.json", "--max-samples", "5", "--json", "--cache-dir", dir + "/cache",
                       FastHost()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json v = json::parse(r.out);
  EXPECT_EQ(v["task"], "softmax");
  EXPECT_EQ(v["target"], "host");
  EXPECT_EQ(v["all_correct"], true);
  EXPECT_FALSE(v["device"].get<std::string>().empty());
  ASSERT_EQ(v["scenarios"].size(), 2u);
  for (const auto& s : v["scenarios"]) {
    EXPECT_EQ(s["status"], "ok") << s.dump();
    EXPECT_GE(s["time_ms"]["n"].get<int>(), 1);
    EXPECT_GT(s["baseline_ms"].get<double>(), 0);
    EXPECT_GT(s["speedup"].get<double>(), 0);
  }
  EXPECT_EQ(v["scenarios"][1]["params"]["dtype"], "bf16");
  EXPECT_TRUE(v["goal"].contains("met"));
  EXPECT_FALSE(v["compile"]["cached"].get<bool>());

  // The same kernel again: the compile cache answers, the table prints.
  auto again = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios",
                           "odd_7x5," + std::string("odd_3x1000_bf16"), "--no-timing", "--cache-dir",
                           dir + "/cache", FastHost()});
  EXPECT_EQ(again.exit_code, 2) << "scenario names from a file are not task scenarios";
  auto table = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios",
                           dir + "/extra.json", "--no-timing", "--cache-dir", dir + "/cache", FastHost()});
  ASSERT_EQ(table.exit_code, 0) << table.out << table.err;
  EXPECT_NE(table.out.find("compile: cached"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("odd_3x1000_bf16"), std::string::npos);
  EXPECT_NE(table.out.find("2/2 correct"), std::string::npos) << table.out;
}

// A long error is cut in the table and printed whole once below it, with
// the scenarios that got it.
TEST(Cli, ErrorsTheTableCutsArePrintedInFull) {
  std::string dir = testing::TempDir("cli-long-error");
  std::string message(150, 'x');
  message += " the end";
  testing::WriteFile(dir + "/fails.cc", R"(#include "kernelseek/abi.h"
extern "C" KSEEK_EXPORT const char* kseek_error_message() { return ")" + message + R"("; }
extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) { (void)a; return 3; }
)");
  json task = json::parse(testing::ReadFile(Softmax() + "/task.json"));
  std::vector<std::string> names;
  for (const auto& s : task["scenarios"]) {
    if (s.contains("targets") && s["targets"] == json::array({"host"}) && names.size() < 2) {
      names.push_back(s["name"].get<std::string>());
    }
  }
  ASSERT_EQ(names.size(), 2u);
  auto r = RunProcess({Kseek(), "eval", "--local", "--task", Softmax(), "--target", "host",
                       "--scenarios", names[0] + "," + names[1], "--no-timing", "--cache-dir",
                       dir + "/cache", dir + "/fails.cc"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string full = "kseek_launch returned 3: " + message;
  EXPECT_NE(r.out.find("~"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("errors in full (the table cuts them):\n  " + names[0] + " and 1 more: " +
                       full + "\n"),
            std::string::npos)
      << r.out;
}

TEST(Cli, WrongKernelExitsOne) {
  std::string dir = testing::TempDir("cli-wrong");
  // Writes 1/cols everywhere: right shape, wrong function.
  testing::WriteFile(dir + "/uniform.cc", R"(
#include <stdint.h>
#include "kernelseek/abi.h"
extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* a) {
  int64_t rows = kseek_param_get(a, "rows", 0), cols = kseek_param_get(a, "cols", 0);
  if (a->tensors[1].dtype != KSEEK_F32) return 1;
  float* y = (float*)a->tensors[1].data;
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = 1.0f / cols;
  return 0;
})");
  auto first = [&]() {
    json task = json::parse(testing::ReadFile(Softmax() + "/task.json"));
    for (const auto& s : task["scenarios"])
      if (s.contains("targets") && s["targets"] == json::array({"host"}) && s["params"]["dtype"] == "f32" &&
          s["params"]["cols"].get<int>() > 1)
        return s["name"].get<std::string>();
    return std::string();
  }();
  ASSERT_FALSE(first.empty());
  auto r = RunProcess({Kseek(), "eval", "--task", Softmax(), "--target", "host", "--scenarios", first,
                       "--no-timing", "--json", "--cache-dir", dir + "/cache", dir + "/uniform.cc"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json v = json::parse(r.out);
  EXPECT_EQ(v["all_correct"], false);
  EXPECT_EQ(v["scenarios"][0]["status"], "incorrect");
  EXPECT_GT(v["scenarios"][0]["rel_l2"].get<double>(), 0.01);
}

}  // namespace
}  // namespace kseek
