// Evaluation requests in transit: packing a task, validation with errors
// that name the field, and the verdict's protocol round trip.
#include "proto/request.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "proto/convert.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

namespace v1 = ::kernelseek::v1;

std::string Softmax() { return testing::SourceDir() + "/kernels/softmax"; }

v1::EvaluationRequest ValidRequest() {
  v1::EvaluationRequest r;
  auto files = PackTask(Softmax(), Target::kHost);
  EXPECT_TRUE(files.ok()) << files.status();
  *r.mutable_task() = *files;
  r.set_target("host");
  r.set_kernel_source(testing::ReadFile(Softmax() + "/fast_host.cc"));
  r.set_kernel_name("fast_host.cc");
  return r;
}

std::string Error(const v1::EvaluationRequest& r) {
  auto u = UnpackedRequest::Create(r);
  EXPECT_FALSE(u.ok());
  if (u.ok()) return "";
  EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument) << u.status();
  return std::string(u.status().message());
}

TEST(Request, PacksOnlyWhatTheTargetNeeds) {
  auto host = PackTask(Softmax(), Target::kHost);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_TRUE(host->files().contains("task.json"));
  EXPECT_TRUE(host->files().contains("reference_host.cc"));
  EXPECT_TRUE(host->files().contains("baseline_host.cc"));
  EXPECT_TRUE(host->files().contains("reference.cu")) << "every file task.json names travels";
  EXPECT_EQ(host->files().size(), 7u) << "task.json and the six sources, nothing else";
  auto fa = PackTask(testing::SourceDir() + "/kernels/flash_attention_fwd", Target::kHost);
  ASSERT_FALSE(fa.ok());
  EXPECT_NE(fa.status().message().find("does not support target host"), std::string::npos);
}

TEST(Request, UnpacksAValidRequest) {
  v1::EvaluationRequest r = ValidRequest();
  r.add_scenario_names("r64_c33_f32_host");
  r.set_seed(5);
  r.mutable_timing()->set_max_samples(4);
  r.set_scenario_timeout_s(9);
  auto u = UnpackedRequest::Create(r);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ((*u)->task().name, "softmax");
  const EvalRequest& e = (*u)->eval();
  EXPECT_EQ(e.target, Target::kHost);
  ASSERT_EQ(e.scenarios.size(), 1u);
  EXPECT_EQ(e.scenarios[0].name, "r64_c33_f32_host");
  EXPECT_EQ(*e.seed, 5u);
  EXPECT_EQ(e.timing.max_samples, 4);
  EXPECT_EQ(*e.scenario_timeout_s, 9);
  std::string dir = (*u)->dir();
  u->reset();
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the private folder is removed";
}

TEST(Request, MalformedRequestsNameTheField) {
  v1::EvaluationRequest r = ValidRequest();
  r.clear_task();
  EXPECT_EQ(Error(r), "task: missing (give task files, or task_name)");
  r.set_task_name("softmax");
  EXPECT_EQ(Error(r), "task_name: only a coordinator resolves task names; send the task's files");

  r = ValidRequest();
  r.set_target("sm_80");
  EXPECT_NE(Error(r).find("target: unknown target 'sm_80'"), std::string::npos);

  r = ValidRequest();
  r.set_target("");
  EXPECT_EQ(Error(r), "target: missing");

  r = ValidRequest();
  r.set_kernel_source(std::string(kMaxKernelSourceBytes + 1, 'x'));
  EXPECT_NE(Error(r).find("kernel_source: "), std::string::npos);

  r = ValidRequest();
  r.set_kernel_source("");
  EXPECT_EQ(Error(r), "kernel_source: missing");

  r = ValidRequest();
  r.set_scenarios_json("[{\"name\": 1}]");
  EXPECT_NE(Error(r).find("scenarios_json: [0].name"), std::string::npos) << Error(r);

  r = ValidRequest();
  r.set_scenarios_json("not json");
  EXPECT_EQ(Error(r), "scenarios_json: not valid JSON");

  r = ValidRequest();
  r.add_scenario_names("r64_c33_f32_host");
  r.add_scenario_names("nope");
  EXPECT_NE(Error(r).find("scenario_names[1]: task 'softmax' has no scenario 'nope'"), std::string::npos);

  r = ValidRequest();
  (*r.mutable_task()->mutable_files())["../evil.cc"] = "x";
  EXPECT_NE(Error(r).find("task.files[../evil.cc]"), std::string::npos) << Error(r);

  r = ValidRequest();
  (*r.mutable_task()->mutable_files())["task.json"] = "{\"name\": 3}";
  EXPECT_NE(Error(r).find("task.files[task.json]: task.json: name: expected a string"), std::string::npos)
      << Error(r);

  r = ValidRequest();
  r.mutable_task()->mutable_files()->erase("baseline_host.cc");
  EXPECT_NE(Error(r).find("task.files[task.json]: task.json: sources.host.baseline: file not found"),
            std::string::npos)
      << Error(r);
}

TEST(Request, RepeatedOrTooManyScenariosAreRefused) {
  v1::EvaluationRequest r = ValidRequest();
  r.add_scenario_names("r64_c33_f32_host");
  r.add_scenario_names("r1_c1_f32_host");
  r.add_scenario_names("r64_c33_f32_host");
  EXPECT_EQ(Error(r),
            "scenario_names[2]: 'r64_c33_f32_host' is scenario_names[0] already; name each scenario once");

  r = ValidRequest();
  for (int i = 0; i < 100000; ++i) r.add_scenario_names("r64_c33_f32_host");
  EXPECT_EQ(Error(r), "scenario_names: 100000 names, more than the limit of 1024");

  r = ValidRequest();
  r.set_scenarios_json(R"([{"name": "a", "params": {"rows": 1, "cols": 1, "dtype": "f32"}},
                           {"name": "a", "params": {"rows": 2, "cols": 2, "dtype": "f32"}}])");
  EXPECT_EQ(Error(r), "scenarios_json: [1].name: duplicate scenario name 'a'");
}

TEST(Request, NumbersMustBeFiniteAndInRange) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, inf, -inf, 1e-300, 0.0, -1.0, 1e9}) {
    v1::EvaluationRequest r = ValidRequest();
    r.set_scenario_timeout_s(bad);
    EXPECT_EQ(Error(r).substr(0, 20), "scenario_timeout_s: ") << bad;
  }
  for (double bad : {nan, inf, -1.0, 1e6}) {
    v1::EvaluationRequest r = ValidRequest();
    r.mutable_timing()->set_max_seconds(bad);
    EXPECT_EQ(Error(r).substr(0, 20), "timing.max_seconds: ") << bad;
  }
  v1::EvaluationRequest r = ValidRequest();
  r.mutable_timing()->set_max_samples(1 << 30);
  EXPECT_EQ(Error(r), "timing.max_samples: 1073741824 is outside 0 (the default) to 100000");
  // The edges are accepted.
  r = ValidRequest();
  r.set_scenario_timeout_s(kMinScenarioTimeoutS);
  r.mutable_timing()->set_max_seconds(kMaxTimingSeconds);
  r.mutable_timing()->set_max_samples(kMaxTimingSamples);
  EXPECT_TRUE(UnpackedRequest::Create(r).ok());
}

TEST(Request, LongNamesAndTooManyFilesAreRefused) {
  v1::EvaluationRequest r = ValidRequest();
  r.set_kernel_name(std::string(300, 'k') + ".cc");
  EXPECT_EQ(Error(r), "kernel_name: 303 bytes, more than the limit of 255");
  r = ValidRequest();
  (*r.mutable_task()->mutable_files())[std::string(300, 'p')] = "x";
  EXPECT_EQ(Error(r), "task.files: a path of 300 bytes, more than the limit of 255");
  r = ValidRequest();
  for (int i = 0; i < 300; ++i) (*r.mutable_task()->mutable_files())["extra" + std::to_string(i) + ".h"] = "";
  EXPECT_EQ(Error(r), "task.files: 307 files, more than the limit of 256");
}

TEST(Convert, VerdictRoundTrip) {
  Verdict v;
  v.task = "softmax";
  v.target = "host";
  v.device.name = "cpu";
  v.compile.ok = true;
  v.compile.log = "log";
  ScenarioResult s;
  s.index = 0;
  s.name = "a";
  s.params = {{"rows", 3}, {"dtype", "bf16"}};
  s.status = ScenarioStatus::kIncorrect;
  s.error = "bad";
  s.outputs.push_back({"y", 0.5, 0.25, false});
  s.time = Summarize({1, 2, 3});
  s.speedup = 1.5;
  v.scenarios.push_back(s);
  v.Finalize();
  Verdict back = FromProto(ToProto(v));
  EXPECT_EQ(ToJson(back), ToJson(v));
  v1::ScenarioResult odd = ToProto(s);
  odd.set_status("exploded");
  EXPECT_EQ(FromProto(odd).status, ScenarioStatus::kCrash);
}

}  // namespace
}  // namespace kseek
