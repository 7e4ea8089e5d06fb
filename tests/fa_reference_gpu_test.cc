// GPU checks of the flash_attention_fwd task's own kernels against a CPU
// fp64 oracle, and of hopper.cu's calls on several streams and in graphs.
//
// Each test builds a small copy of the task whose reference is
// kernels/flash_attention_fwd/test/reference_fp64.cu (attention in double
// on the host) and whose scenarios cover every mask and head-grouping case:
// causal and not, seqlen_q below, equal to and above seqlen_k, one query,
// one key, GQA 4 and 8, MQA, head_dim 64/128/256, lengths off the tile
// grid, bf16 and f16. It then runs `kseek eval` on the task's reference
// (with tolerances tight enough for an fp32-accumulating kernel) and on its
// baseline (with the task's own tolerances), and requires every scenario to
// pass.
#include <dlfcn.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "harness/src/compile.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek {
namespace {

using nlohmann::json;

std::string TaskDir() {
  return testing::SourceDir() + "/kernels/flash_attention_fwd";
}

// The harness target of CUDA device 0 ("sm_90a", "sm_100a"), or "" when its
// architecture has none.
std::string DeviceTarget() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return "";
  using InitFn = int (*)(unsigned);
  using DeviceGetFn = int (*)(int*, int);
  using AttributeFn = int (*)(int*, int, int);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto device_get = reinterpret_cast<DeviceGetFn>(dlsym(lib, "cuDeviceGet"));
  auto attribute =
      reinterpret_cast<AttributeFn>(dlsym(lib, "cuDeviceGetAttribute"));
  constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_...
  int device = 0, major = 0;
  if (init == nullptr || device_get == nullptr || attribute == nullptr ||
      init(0) != 0 || device_get(&device, 0) != 0 ||
      attribute(&major, kComputeCapabilityMajor, device) != 0)
    return "";
  if (major == 9) return "sm_90a";
  if (major == 10) return "sm_100a";
  return "";
}

json Scenario(const std::string& name, int batch, int seqlen_q, int seqlen_k,
              int heads_q, int heads_kv, int head_dim, int causal,
              const std::string& dtype) {
  return {{"name", name},
          {"params",
           {{"batch", batch},
            {"seqlen_q", seqlen_q},
            {"seqlen_k", seqlen_k},
            {"heads_q", heads_q},
            {"heads_kv", heads_kv},
            {"head_dim", head_dim},
            {"causal", causal},
            {"dtype", dtype}}}};
}

// Small enough for the CPU oracle; every mask and grouping case appears.
json SmallScenarios() {
  return json::array({
      Scenario("eq_hd64_full_bf16", 2, 128, 128, 4, 4, 64, 0, "bf16"),
      Scenario("eq_hd64_causal_f16", 2, 128, 128, 4, 4, 64, 1, "f16"),
      Scenario("eq_hd256_causal_bf16", 1, 257, 257, 1, 1, 256, 1, "bf16"),
      Scenario("ragged_hd128_causal_bf16", 1, 150, 150, 2, 2, 128, 1, "bf16"),
      Scenario("ragged_hd256_full_f16", 1, 77, 77, 2, 2, 256, 0, "f16"),
      Scenario("qshort_hd128_causal_bf16", 2, 37, 200, 4, 4, 128, 1, "bf16"),
      Scenario("qshort_hd64_full_f16", 1, 70, 300, 2, 2, 64, 0, "f16"),
      Scenario("qlong_hd128_causal_bf16", 1, 200, 70, 2, 2, 128, 1, "bf16"),
      Scenario("qlong_k1_hd64_causal_f16", 2, 130, 1, 2, 2, 64, 1, "f16"),
      Scenario("qlong_hd256_full_bf16", 1, 100, 40, 2, 2, 256, 0, "bf16"),
      Scenario("decode_hd128_causal_bf16", 3, 1, 500, 4, 4, 128, 1, "bf16"),
      Scenario("decode_hd64_full_f16", 2, 1, 129, 2, 2, 64, 0, "f16"),
      Scenario("single_q1_k1_hd64_causal_bf16", 1, 1, 1, 1, 1, 64, 1, "bf16"),
      Scenario("gqa4_hd64_causal_bf16", 1, 96, 96, 8, 2, 64, 1, "bf16"),
      Scenario("gqa8_hd128_full_f16", 1, 100, 160, 16, 2, 128, 0, "f16"),
      Scenario("mqa_hd256_causal_bf16", 1, 90, 90, 4, 1, 256, 1, "bf16"),
      Scenario("mqa_qshort_hd128_causal_f16", 2, 5, 300, 8, 1, 128, 1, "f16"),
      Scenario("gqa4_qlong_hd256_causal_f16", 1, 120, 65, 8, 2, 256, 1, "f16"),
  });
}

// Writes a copy of the task into a fresh folder: the fp64 oracle as its
// reference, the small scenarios, and `tolerances` (tensor name -> the
// "tolerance" object) where given.
std::string MakeSmallTask(const json& tolerances) {
  const std::string dir = testing::TempDir("fa_small_task");
  json task = json::parse(testing::ReadFile(TaskDir() + "/task.json"));
  task["sources"]["cuda"] = {{"reference", "reference_fp64.cu"},
                             {"baseline", "baseline.cu"},
                             {"kernels", json::array()}};
  task["scenarios"] = SmallScenarios();
  for (json& tensor : task["tensors"]) {
    const std::string name = tensor["name"];
    if (tolerances.contains(name)) tensor["tolerance"] = tolerances[name];
  }
  testing::WriteFile(dir + "/task.json", task.dump(2));
  testing::WriteFile(dir + "/reference_fp64.cu",
                     testing::ReadFile(TaskDir() + "/test/reference_fp64.cu"));
  testing::WriteFile(dir + "/baseline.cu",
                     testing::ReadFile(TaskDir() + "/baseline.cu"));
  return dir;
}

// Evaluates `kernel` on `task_dir` and expects every scenario to pass.
void ExpectAllCorrect(const std::string& task_dir, const std::string& kernel) {
  const std::string target = DeviceTarget();
  if (target.empty()) GTEST_SKIP() << "skipped: device is not sm_90 or sm_100";
  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: no nvcc";
  testing::ProcessResult r = testing::RunProcess(
      {testing::BinDir() + "/kseek", "eval", "--task", task_dir, "--target",
       target, "--no-timing", "--json", kernel});
  ASSERT_EQ(r.exit_code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  const json verdict = json::parse(r.out);
  EXPECT_TRUE(verdict.at("all_correct").get<bool>());
  ASSERT_EQ(verdict.at("scenarios").size(), SmallScenarios().size());
  for (const json& s : verdict.at("scenarios")) {
    EXPECT_EQ(s.at("status"), "ok")
        << s.at("name") << ": " << s.value("error", "") << " "
        << s.value("outputs", json()).dump();
  }
}

TEST(FlashAttentionReference, MatchesFp64OnSmallScenarios) {
  KSEEK_REQUIRE_CUDA_DEVICE();
  // reference.cu rounds once from fp32, so it may differ from the rounded
  // fp64 result by one unit in the last place; |o| < 8 here, where that is
  // 2^-5 in bf16 and 2^-8 in f16.
  const json tight = {
      {"o",
       {{"bf16", {{"rel_l2", 1e-3}, {"max_abs", 3.2e-2}}},
        {"f16", {{"rel_l2", 2e-4}, {"max_abs", 4e-3}}}}},
      {"lse", {{"f32", {{"rel_l2", 2e-5}, {"max_abs", 2e-4}}}}}};
  ExpectAllCorrect(MakeSmallTask(tight), TaskDir() + "/reference.cu");
}

TEST(FlashAttentionBaseline, MatchesFp64WithinTaskTolerance) {
  KSEEK_REQUIRE_CUDA_DEVICE();
  ExpectAllCorrect(MakeSmallTask(json::object()), TaskDir() + "/baseline.cu");
}

// hopper.cu through the harness as a candidate runs (kseek eval: the kernel
// host as another user where it can be, the seccomp filter) on task
// scenarios that take every scratch path: the WGMMA queue, WGMMA split
// keys, version 1's splits and the decode kernel's long splits. (v4a's
// split partials came from a memory pool whose allocation the sandbox
// refused: correct in a plain process, failed here.)
TEST(FlashAttentionHopper, ScratchPathsPassUnderTheHarnessSandbox) {
  KSEEK_REQUIRE_CUDA_DEVICE();
  if (DeviceTarget() != "sm_90a") GTEST_SKIP() << "skipped: device is not sm_90";
  if (!testing::HaveNvcc()) GTEST_SKIP() << "skipped: no nvcc";
  const std::vector<std::string> names = {
      "grid_hd128_causal_s2048_bf16", "prefill_q256_k16384_hd128_full_bf16",
      "decode_q1_k8192_hd64_causal_bf16", "decode_b1_k32768_gqa8_hd128_bf16"};
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
  const testing::ProcessResult r = testing::RunProcess(
      {testing::BinDir() + "/kseek", "eval", "--task", TaskDir(), "--target", "sm_90a",
       "--no-timing", "--json", "--scenarios", list, TaskDir() + "/hopper.cu"});
  ASSERT_EQ(r.exit_code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  const json verdict = json::parse(r.out);
  ASSERT_EQ(verdict.at("scenarios").size(), names.size()) << r.out;
  for (const json& s : verdict.at("scenarios"))
    EXPECT_EQ(s.at("status"), "ok") << s.at("name") << ": " << s.value("error", "");
}

// hopper.cu called on four streams at once, from a CUDA graph launched
// beside calls on other streams, and on 24 streams at once (more than it
// keeps partials buffers for) (tests/fa_streams/streams_check.cu): every
// output must equal the same call's made alone, bit for bit. Built as the
// harness builds a candidate (kseek compile).
TEST(FlashAttentionHopper, ConcurrentStreamsAndGraphsMatchOneStream) {
  KSEEK_REQUIRE_CUDA_DEVICE();
  if (DeviceTarget() != "sm_90a") GTEST_SKIP() << "skipped: device is not sm_90";
  const std::string nvcc = CompilerFor(Target::kSm90a);
  if (nvcc.empty()) GTEST_SKIP() << "skipped: no nvcc";
  const testing::ProcessResult lib = testing::RunProcess(
      {testing::BinDir() + "/kseek", "compile", "--task", TaskDir(), "--target", "sm_90a",
       TaskDir() + "/hopper.cu"});
  ASSERT_EQ(lib.exit_code, 0) << lib.out << lib.err;
  const std::string library = lib.out.substr(0, lib.out.find('\n'));
  ASSERT_NE(library.find(".so"), std::string::npos) << lib.out;
  const std::string check = testing::TempDir("fa_streams") + "/streams_check";
  const testing::ProcessResult built = testing::RunProcess(
      {nvcc, "-O2", "-std=c++17", "-arch=sm_90a", "-I",
       testing::SourceDir() + "/harness/include", "-o", check,
       testing::SourceDir() + "/tests/fa_streams/streams_check.cu", "-ldl"});
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  const testing::ProcessResult r = testing::RunProcess({check, library, "--rounds", "4"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("streams_check: all match"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace kseek
