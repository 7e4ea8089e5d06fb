// task.json loading: a valid task round-trips; every malformed field is
// refused with the file, the field and what is wrong.
#include "harness/src/task.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using nlohmann::json;

json ValidTask() {
  return json::parse(R"json({
    "name": "scale",
    "description": "y = 2x",
    "params": {"n": {"min": 1}, "dtype": {"dtype": ["f32", "bf16"]}},
    "tensors": [
      {"name": "x", "role": "in", "dtype": "dtype", "shape": ["n"], "init": {"dist": "uniform", "low": -1, "high": 1}},
      {"name": "y", "role": "out", "dtype": "dtype", "shape": ["n"],
       "tolerance": {"f32": {"rel_l2": 1e-6, "max_abs": 1e-6}, "*": {"rel_l2": 1e-2, "max_abs": 1e-2}}},
      {"name": "stats", "role": "out", "dtype": "f32", "shape": [2], "tolerance": {"rel_l2": 0, "max_abs": 0}}
    ],
    "flops": "n",
    "bytes": "2 * n * size(dtype)",
    "sources": {"host": {"reference": "ref.cc", "baseline": "base.cc", "kernels": ["fast.cc"]}},
    "targets": ["host"],
    "limits": {"scenario_timeout_s": 5},
    "goal": {"speedup": 2},
    "scenarios": [
      {"name": "small", "params": {"n": 10, "dtype": "f32"}},
      {"name": "big_bf16", "params": {"n": 1000, "dtype": "bf16"}, "targets": ["host"]}
    ]
  })json");
}

class TaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir("task");
    for (const char* f : {"ref.cc", "base.cc", "fast.cc"}) testing::WriteFile(dir_ + "/" + f, "// kernel\n");
  }
  absl::StatusOr<TaskSpec> Load(const json& j) {
    testing::WriteFile(dir_ + "/task.json", j.dump(2));
    return LoadTask(dir_);
  }
  // Loads a broken task and returns the error message.
  std::string Error(const json& j) {
    auto t = Load(j);
    EXPECT_FALSE(t.ok());
    if (t.ok()) return "";
    std::string msg(t.status().message());
    EXPECT_NE(msg.find(dir_ + "/task.json"), std::string::npos) << msg;
    return msg;
  }
  std::string dir_;
};

TEST_F(TaskTest, LoadsAValidTask) {
  auto t = Load(ValidTask());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name, "scale");
  ASSERT_EQ(t->tensors.size(), 3u);
  EXPECT_EQ(t->tensors[0].role, TensorRole::kIn);
  EXPECT_EQ(t->tensors[0].init.kind, Distribution::kUniform);
  EXPECT_EQ(t->tensors[1].tolerance.at("f32").rel_l2, 1e-6);
  EXPECT_EQ(t->tensors[2].tolerance.count("*"), 1u);
  EXPECT_EQ(t->goal_speedup, 2);
  EXPECT_EQ(t->scenario_timeout_s, 5);
  ASSERT_EQ(t->scenarios.size(), 2u);
  const Scenario& big = t->scenarios[1];
  EXPECT_EQ(TensorDtype(t->tensors[0], big), KSEEK_BF16);
  EXPECT_EQ(TensorDtype(t->tensors[2], big), KSEEK_F32);
  EXPECT_EQ(*TensorShape(t->tensors[0], big), std::vector<int64_t>{1000});
  EXPECT_EQ(*t->bytes->Eval(ScenarioEnv(big)), 4000);
  EXPECT_EQ(ScenarioParamsJson(*t, big), json::parse(R"({"n": 1000, "dtype": "bf16"})"));
  EXPECT_TRUE(big.RunsOn(Target::kHost));
  EXPECT_FALSE(big.RunsOn(Target::kSm90a));
  EXPECT_EQ(t->sources.at("host").kernels.size(), 1u);
}

TEST_F(TaskTest, RefusesMalformedFields) {
  struct Case {
    std::string pointer;  // JSON pointer to change
    json value;           // new value (null: remove)
    std::string field;    // expected in the message
    std::string what;     // expected in the message
  };
  const Case cases[] = {
      {"/name", nullptr, "name", "missing"},
      {"/params/n/min", "one", "params.n.min", "expected an integer"},
      {"/params/n/multiple_of", 0, "params.n.multiple_of", "expected a positive integer"},
      {"/params/dtype/multiple_of", 2, "params.dtype.multiple_of", "no multiple_of"},
      {"/params/dtype/dtype/1", "bf17", "params.dtype.dtype[1]", "unknown dtype 'bf17'"},
      {"/tensors/0/role", "input", "tensors[0].role", "expected \"in\""},
      {"/tensors/0/dtype", "precision", "tensors[0].dtype", "neither a dtype nor a dtype parameter"},
      {"/tensors/0/shape/0", "n +", "tensors[0].shape[0]", "unexpected end"},
      {"/tensors/0/shape/0", "m", "tensors[0].shape[0]", "unknown parameter 'm'"},
      {"/tensors/0/init/dist", "poisson", "tensors[0].init.dist", "expected \"normal\" or \"uniform\""},
      {"/tensors/0/init/high", -2, "tensors[0].init.high", "greater than low"},
      {"/tensors/1/tolerance", nullptr, "tensors[1].tolerance", "missing"},
      {"/tensors/1/tolerance/f32/rel_l2", -1, "tensors[1].tolerance.f32.rel_l2", "negative"},
      {"/tensors/0/colour", "red", "tensors[0].colour", "unknown field"},
      {"/flops", "n * q", "flops", "unknown parameter 'q'"},
      {"/sources/host/reference", "missing.cc", "sources.host.reference", "file not found"},
      {"/sources/cuda", json::object(), "sources.cuda.reference", "missing"},
      {"/targets/0", "sm_80", "targets[0]", "unknown target 'sm_80'"},
      {"/targets", json::array({"host", "sm_90a"}), "sources", "needs sources for family \"cuda\""},
      {"/goal/speedup", 0, "goal.speedup", "must be positive"},
      {"/limits/job_timeout_s", "long", "limits.job_timeout_s", "expected a number"},
      {"/scenarios/0/params/n", 0, "scenarios[0].params.n", "below the minimum 1"},
      {"/scenarios/0/params/dtype", "f64", "scenarios[0].params.dtype", "not allowed"},
      {"/scenarios/1/params/m", 3, "scenarios[1].params.m", "not a parameter"},
      {"/scenarios/1/name", "small", "scenarios[1].name", "duplicate scenario name"},
      {"/scenarios/0/targets", json::array({"sm_90a"}), "scenarios[0].targets[0]", "does not support"},
      {"/scenarios", json::array(), "scenarios", "at least one scenario"},
  };
  for (const auto& c : cases) {
    json j = ValidTask();
    json::json_pointer ptr(c.pointer);
    if (c.value.is_null())
      j[ptr.parent_pointer()].erase(ptr.back());
    else
      j[ptr] = c.value;
    std::string msg = Error(j);
    EXPECT_NE(msg.find(c.field + ": "), std::string::npos) << c.pointer << " -> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << c.pointer << " -> " << msg;
  }
}

// A shipped kernel may be restricted to some targets of its family
// (flash_attention_fwd: blackwell.cu on sm_100a only).
TEST_F(TaskTest, KernelsRestrictedToTargets) {
  testing::WriteFile(dir_ + "/ref.cu", "// kernel\n");
  testing::WriteFile(dir_ + "/fast.cu", "// kernel\n");
  json j = ValidTask();
  j["targets"] = json::array({"host", "sm_90a", "sm_100a"});
  j["sources"]["cuda"] = json::parse(
      R"({"reference": "ref.cu", "kernels": ["ref.cu", {"file": "fast.cu", "targets": ["sm_100a"]}]})");
  auto t = Load(j);
  ASSERT_TRUE(t.ok()) << t.status();
  const FamilySources& cuda = t->sources.at("cuda");
  ASSERT_EQ(cuda.kernels.size(), 2u);
  EXPECT_TRUE(cuda.KernelRunsOn(cuda.kernels[0], Target::kSm90a));
  EXPECT_TRUE(cuda.KernelRunsOn(cuda.kernels[1], Target::kSm100a));
  EXPECT_FALSE(cuda.KernelRunsOn(cuda.kernels[1], Target::kSm90a));

  j["sources"]["cuda"]["kernels"][1]["targets"][0] = "host";
  EXPECT_NE(Error(j).find("sources.cuda.kernels[1].targets[0]: target host is not of family \"cuda\""),
            std::string::npos);
  j["sources"]["cuda"]["kernels"][1]["targets"][0] = "sm_80";
  EXPECT_NE(Error(j).find("sources.cuda.kernels[1].targets[0]: unknown target 'sm_80'"), std::string::npos);
  j["sources"]["cuda"]["kernels"][1].erase("targets");
  EXPECT_NE(Error(j).find("sources.cuda.kernels[1].targets: missing"), std::string::npos);
  j["sources"]["cuda"]["kernels"][1] = json::parse(R"({"file": "none.cu", "targets": ["sm_100a"]})");
  EXPECT_NE(Error(j).find("sources.cuda.kernels[1].file: file not found"), std::string::npos);
}

TEST_F(TaskTest, MissingParameterInScenario) {
  json j = ValidTask();
  j["scenarios"][0]["params"].erase("dtype");
  std::string msg = Error(j);
  EXPECT_NE(msg.find("scenarios[0].params.dtype: missing"), std::string::npos) << msg;
}

TEST_F(TaskTest, MultipleOfRefusesOtherValuesAsBadInput) {
  json j = ValidTask();
  j["params"]["n"]["multiple_of"] = 5;
  j["scenarios"][0]["params"]["n"] = 12;
  std::string msg = Error(j);
  EXPECT_NE(msg.find("scenarios[0].params.n: 12 is not a multiple of 5"), std::string::npos) << msg;

  j["scenarios"][0]["params"]["n"] = 10;
  auto t = Load(j);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->FindParam("n")->multiple_of, 5);
  auto extra = ParseScenarios(*t, json::parse(R"([{"name": "odd", "params": {"n": 7, "dtype": "f32"}}])"),
                              "extra.json");
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(extra.status().message().find("extra.json: [0].params.n: 7 is not a multiple of 5"),
            std::string::npos)
      << extra.status();
}

TEST_F(TaskTest, NotJsonAndNoFolder) {
  testing::WriteFile(dir_ + "/task.json", "{\"name\": ");
  auto t = LoadTask(dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("not valid JSON"), std::string::npos) << t.status();
  auto none = LoadTask(dir_ + "/nope");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no such task folder"), std::string::npos);
}

TEST_F(TaskTest, ExternalScenarioFiles) {
  auto t = Load(ValidTask());
  ASSERT_TRUE(t.ok()) << t.status();
  auto extra = ParseScenarios(*t, json::parse(R"([{"name": "odd", "params": {"n": 7, "dtype": "f32"}}])"),
                              "extra.json");
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_EQ((*extra)[0].params.at("n"), 7);
  auto wrapped = ParseScenarios(*t, json::parse(R"({"scenarios": [{"name": "x", "params": {"n": -1, "dtype": "f32"}}]})"),
                                "extra.json");
  ASSERT_FALSE(wrapped.ok());
  EXPECT_NE(wrapped.status().message().find("extra.json: scenarios[0].params.n"), std::string::npos)
      << wrapped.status();
}

TEST(ShippedTasks, EveryTaskInTheRepoLoads) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::SourceDir() + "/kernels")) {
    if (!std::filesystem::exists(entry.path() / "task.json")) continue;
    ++found;
    auto t = LoadTask(entry.path().string());
    EXPECT_TRUE(t.ok()) << t.status();
  }
  EXPECT_GE(found, 1);
}

}  // namespace
}  // namespace kseek
