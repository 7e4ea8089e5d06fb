// Verdict statistics, summary and the JSON round trip.
#include "harness/src/verdict.h"

#include <cmath>

#include "gtest/gtest.h"

namespace kseek {
namespace {

TEST(Summarize, MedianMeanStderr) {
  TimeStats t = Summarize({4, 1, 3, 2});
  EXPECT_EQ(t.n, 4);
  EXPECT_DOUBLE_EQ(t.median, 2.5);
  EXPECT_DOUBLE_EQ(t.mean, 2.5);
  EXPECT_DOUBLE_EQ(t.min, 1);
  EXPECT_DOUBLE_EQ(t.max, 4);
  // sample sd = sqrt(5/3); stderr = sd / 2
  EXPECT_NEAR(t.stderr_ms, std::sqrt(5.0 / 3.0) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(Summarize({7}).median, 7);
  EXPECT_EQ(Summarize({7}).stderr_ms, 0);
}

Verdict Sample() {
  Verdict v;
  v.task = "softmax";
  v.target = "host";
  v.goal_speedup = 1.5;
  for (int i = 0; i < 2; ++i) {
    ScenarioResult s;
    s.index = i;
    s.name = i == 0 ? "a" : "b";
    s.params = {{"rows", 4}};
    s.time = Summarize({1, 1.1, 0.9});
    s.baseline = Summarize({2, 2.2, 1.8});
    s.speedup = i == 0 ? 2.0 : 8.0;
    s.outputs.push_back({"y", 1e-7, 1e-8, true});
    v.scenarios.push_back(s);
  }
  return v;
}

TEST(Verdict, GeomeanAndGoal) {
  Verdict v = Sample();
  v.Finalize();
  EXPECT_TRUE(v.all_correct);
  ASSERT_TRUE(v.geomean_speedup);
  EXPECT_NEAR(*v.geomean_speedup, 4.0, 1e-12);
  EXPECT_TRUE(v.goal_met);
  v.scenarios[1].status = ScenarioStatus::kIncorrect;
  v.Finalize();
  EXPECT_FALSE(v.all_correct);
  EXPECT_FALSE(v.goal_met);
  Verdict failed = Sample();
  failed.error = "policy";
  failed.Finalize();
  EXPECT_FALSE(failed.all_correct);
}

TEST(Verdict, JsonRoundTrip) {
  Verdict v = Sample();
  v.device.name = "NVIDIA H200";
  v.device.cc_major = 9;
  v.compile.registers = 40;
  v.compile.log = "ptxas info";
  v.scenarios[0].phase_seconds = {{"reference", 0.25}, {"timing", 0.5}};
  v.scenarios[0].cross_check = ScenarioResult::CrossCheck{0.21, 0.2, 0.1, 2};
  v.Finalize();
  nlohmann::json j = ToJson(v);
  EXPECT_EQ(j["scenarios"][0]["phase_seconds"]["timing"], 0.5);
  EXPECT_EQ(j["scenarios"][0]["cross_check"]["measurements"], 2);
  EXPECT_FALSE(j["scenarios"][1].contains("cross_check"));
  EXPECT_EQ(j["scenarios"][0]["status"], "ok");
  EXPECT_EQ(j["goal"]["met"], true);
  EXPECT_EQ(j["device"], "NVIDIA H200");
  EXPECT_EQ(j["scenarios"][1]["baseline_ms"], 2.0);
  auto back = VerdictFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back), j);
  nlohmann::json bad = j;
  bad["scenarios"][0]["cross_check"].erase("allowed_ms");
  EXPECT_FALSE(VerdictFromJson(bad).ok());
  bad = j;
  bad["scenarios"][0]["phase_seconds"]["timing"] = "slow";
  EXPECT_FALSE(VerdictFromJson(bad).ok());
  j["scenarios"][0]["status"] = "great";
  EXPECT_FALSE(VerdictFromJson(j).ok());
  EXPECT_FALSE(VerdictFromJson(nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace kseek
