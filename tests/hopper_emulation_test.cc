// The Hopper attention kernel (kernels/flash_attention_fwd/hopper.cu) on the
// CPU emulation of its PTX (tests/hopper_emu/, built once per configuration
// as build/bin/hopper_emu_*): every emulated shape against an fp64
// reference, with asynchronous work completing at issue and only at the
// waits, in shards that CTest runs side by side; the non-default switch
// settings, on their shapes; a planted masking bug, which must fail; and a
// planted register overdraft, which must deadlock.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

using testing::ProcessResult;

// Runs build/bin/hopper_emu_<config> with `args` (a name filter, --shard).
ProcessResult Emulate(const std::string& config, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {testing::BinDir() + "/hopper_emu_" + config};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::RunProcess(argv);
}

// The "N/M passed" line of the run.
std::string Summary(const ProcessResult& r) {
  const size_t end = r.out.rfind(" passed");
  if (end == std::string::npos) return "";
  const size_t begin = r.out.rfind('\n', end);
  return r.out.substr(begin == std::string::npos ? 0 : begin + 1,
                      end - (begin == std::string::npos ? 0 : begin + 1));
}

// Runs that passed and runs in all, from the summary; {-1, -1} without one.
std::pair<int, int> Counts(const ProcessResult& r) {
  const std::string summary = Summary(r);
  const size_t slash = summary.find('/');
  if (summary.empty() || slash == std::string::npos) return {-1, -1};
  return {std::stoi(summary.substr(0, slash)), std::stoi(summary.substr(slash + 1))};
}

std::string Tail(const std::string& text) {
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

// The default build's shapes, one shard of kShards per test.
constexpr int kShards = 8;

class EveryShape : public ::testing::TestWithParam<int> {};

TEST_P(EveryShape, PassesOnItsShard) {
  const std::string shard = "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kShards);
  ProcessResult r = Emulate("default", {shard});
  EXPECT_EQ(r.exit_code, 0) << Tail(r.out) << r.err;
  const auto [passed, runs] = Counts(r);
  EXPECT_EQ(passed, runs) << Tail(r.out) << r.err;
  // Over 100 runs (shapes x 2 modes) in all.
  EXPECT_GE(runs, 100 / kShards) << Tail(r.out) << r.err;
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, EveryShape, ::testing::Range(0, kShards));

// The non-default settings (the switches hopper_emu_switches is built with,
// tests/hopper_emu/CMakeLists.txt), each on the shapes it changes: few-tile
// shapes on the mma.sync kernel instead of the WGMMA kernel's split keys,
// one Q buffer at head_dim 64 and two at head_dim 128 (also by the causal
// short-sequence rule), 192-key tiles at head_dim 128 without causal
// masking, no short key tiles, Q barriers per consumer at every head_dim,
// 16-byte O stores at head_dim 64 only (the 4-byte stores at 128 and 256),
// the mma.sync kernel with one query head per row tile (no GQA packing, so
// GQA decode on either kernel), O rescaled under the next S in every WGMMA
// kernel, and S over all of D's columns at head_dims 80-96 and 136-192.
class NonDefaultSwitches : public ::testing::TestWithParam<const char*> {};

TEST_P(NonDefaultSwitches, PassOnTheirShapes) {
  const std::string filter = GetParam();
  ProcessResult r = Emulate("switches", {filter});
  EXPECT_EQ(r.exit_code, 0) << filter << "\n" << Tail(r.out) << r.err;
  const auto [passed, runs] = Counts(r);
  EXPECT_EQ(passed, runs) << filter << "\n" << Tail(r.out) << r.err;
  EXPECT_GE(runs, 2) << filter << "\n" << Tail(r.out) << r.err;
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, NonDefaultSwitches,
                         ::testing::Values("s_hd128_bf16", "s_hd64", "w_hd64", "w_hd128",
                                           "w_hd256", "pk_", "dim_"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           if (name.back() == '_') name.pop_back();
                           return name;
                         });

// The planted bugs are transform.py's PLANTS. A plant that no longer
// applies gives a kernel whose launches fail with the reason ("launch
// returned"), which is not the failure these tests want.
std::string NotLaunched(const ProcessResult& r) {
  const size_t at = r.out.find("launch returned");
  return at == std::string::npos ? "" : r.out.substr(at, r.out.find('\n', at) - at);
}

// The causal mask one key too lenient: the reference check must fail.
TEST(HopperEmulationTest, PlantedMaskBugFails) {
  ProcessResult r = Emulate("mask_bug", {"w_hd128_f16_causal"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/hopper_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << Tail(r.out) << r.err;
  const auto [passed, runs] = Counts(r);
  EXPECT_GT(runs, 0) << Tail(r.out) << r.err;  // it ran, and failed
  EXPECT_LT(passed, runs) << Tail(r.out) << r.err;
}

// setmaxnreg moves registers within the block only: a producer that keeps
// 32 registers while two consumers take 240 each asks for more than the
// 3 x 168 the block has at launch, and the consumers' setmaxnreg.inc waits
// forever on the device. The kernel's static_assert rules that out for its
// own counts; here the count is planted past it, and the emulation must
// stop with the deadlock named.
TEST(HopperEmulationTest, PlantedRegisterOverdraftDeadlocks) {
  ProcessResult r = Emulate("overdraft", {"w_hd128_f16_causal"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/hopper_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << Tail(r.out) << r.err;
  EXPECT_NE((r.out + r.err).find("deadlock: setmaxnreg.inc waits"), std::string::npos)
      << Tail(r.out) << r.err;
}

}  // namespace
}  // namespace kseek
