// The Blackwell attention kernel (kernels/flash_attention_fwd/blackwell.cu)
// on the CPU emulation of its PTX (tests/blackwell_emu/, built once per
// configuration as build/bin/blackwell_emu_*): every emulated shape (each
// shape class of the task at small sizes) against an fp64 reference, with
// asynchronous work completing at issue and only when it must, in shards
// that CTest runs side by side; the non-default switch settings; and five
// planted bugs that the emulation must catch: O placed in the tensor-memory
// columns of an S buffer, a missing tcgen05.commit, a missing
// tcgen05.wait::ld, a missing mbarrier wait for a TMA load, and a
// setmaxnreg overdraft.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/emulation_testing.h"
#include "tests/test_util.h"

namespace kseek {
namespace {

using testing::EmulationCounts;
using testing::EmulationTail;
using testing::NotLaunched;
using testing::ProcessResult;

// Runs build/bin/blackwell_emu_<config> with `args` (a name filter, --shard).
ProcessResult Emulate(const std::string& config, const std::vector<std::string>& args) {
  return testing::RunEmulator("blackwell_emu_" + config, args);
}

// The default build's shapes, one shard of kShards per test.
constexpr int kShards = 2;

class EveryShape : public ::testing::TestWithParam<int> {};

TEST_P(EveryShape, PassesOnItsShard) {
  const std::string shard = "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kShards);
  ProcessResult r = Emulate("default", {shard});
  EXPECT_EQ(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(passed, runs) << EmulationTail(r.out) << r.err;
  // 48 shapes x 2 modes in all.
  EXPECT_GE(runs, 96 / kShards) << EmulationTail(r.out) << r.err;
}

INSTANTIATE_TEST_SUITE_P(BlackwellEmulation, EveryShape, ::testing::Range(0, kShards));

// Every shape as a call captured into a CUDA graph (--captured): the split
// partials come from the kernel's pool all the same (inside a capture, as
// allocation nodes of the graph), filled with NaN by the emulation, and
// every allocation must be freed by the call's end.
TEST(BlackwellEmulationTest, EveryShapeCapturedPasses) {
  ProcessResult r = Emulate("default", {"--captured"});
  EXPECT_EQ(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(passed, runs) << EmulationTail(r.out) << r.err;
  EXPECT_GE(runs, 96) << EmulationTail(r.out) << r.err;
}

// The non-default settings (blackwell_emu_switches: O rescaled on every
// tile, three K/V stages at head_dim 64, 64-key tiles at head_dim 72..128,
// no split keys, no GQA packing), on every shape, in kShards shards.
class NonDefaultSwitches : public ::testing::TestWithParam<int> {};

TEST_P(NonDefaultSwitches, PassOnTheirShard) {
  const std::string shard = "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kShards);
  ProcessResult r = Emulate("switches", {shard});
  EXPECT_EQ(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(passed, runs) << EmulationTail(r.out) << r.err;
  EXPECT_GE(runs, 96 / kShards) << EmulationTail(r.out) << r.err;
}

INSTANTIATE_TEST_SUITE_P(BlackwellEmulation, NonDefaultSwitches, ::testing::Range(0, kShards));

// O in columns [BN, BN + D): S of every odd key tile lands on it, from the
// fourth tile on. The reference comparison must fail.
TEST(BlackwellEmulationTest, PlantedTmemColumnFails) {
  ProcessResult r = Emulate("tmem_column", {"ragged_hd128_full_q100_k1001"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/blackwell_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(runs, 2) << EmulationTail(r.out) << r.err;
  EXPECT_EQ(passed, 0) << EmulationTail(r.out) << r.err;
}

// P V never committed to the mbarrier that hands O on: the softmax and
// the correction wait forever, and the emulation names the barrier that no
// tcgen05.commit targets.
TEST(BlackwellEmulationTest, PlantedMissingCommitDeadlocks) {
  ProcessResult r = Emulate("missing_commit", {"grid_hd128_causal_s300"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/blackwell_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  EXPECT_NE(r.err.find("EMU FAILURE: deadlock"), std::string::npos) << EmulationTail(r.out) << r.err;
  EXPECT_NE(r.err.find("no tcgen05.commit ever targeted it"), std::string::npos) << EmulationTail(r.out) << r.err;
}

// S read from registers without tcgen05.wait::ld: when loads complete only
// at the wait (the lazy mode), the registers hold NaN and the outputs fail.
TEST(BlackwellEmulationTest, PlantedMissingWaitFails) {
  ProcessResult r = Emulate("missing_wait", {"grid_hd64_full_s400_f16"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/blackwell_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(runs, 2) << EmulationTail(r.out) << r.err;
  EXPECT_EQ(passed, 1) << EmulationTail(r.out) << r.err;  // the eager run passes
  const size_t lazy = r.out.find(" lazy ");
  ASSERT_NE(lazy, std::string::npos) << EmulationTail(r.out) << r.err;
  const std::string line = r.out.substr(lazy, r.out.find('\n', lazy) - lazy);
  EXPECT_NE(line.find("-> FAIL"), std::string::npos) << line;
  EXPECT_EQ(line.find(" nan 0 "), std::string::npos) << line;  // NaN outputs
}

// P V issued without waiting for V's "full" barrier: when the load is
// still in flight (the lazy mode completes a TMA box only at a wait on its
// barrier), the emulation names the race at the MMA's issue.
TEST(BlackwellEmulationTest, PlantedMissingTmaWaitIsNamed) {
  ProcessResult r = Emulate("missing_tma_wait", {"grid_hd128_full_s300"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/blackwell_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  EXPECT_NE(r.err.find("EMU FAILURE: tcgen05.mma reads shared memory that a TMA load not yet complete writes"),
            std::string::npos)
      << EmulationTail(r.out) << r.err;
}

// setmaxnreg moves registers within the block only: the load/MMA
// warpgroup keeping 160 while the softmax takes 240 and the correction 152
// asks for more than the 3 x 168 the block has at launch; the softmax's
// setmaxnreg.inc would wait forever on the device. The kernel's
// static_assert rules that out for its own counts; the plant goes past it.
TEST(BlackwellEmulationTest, PlantedRegisterOverdraftDeadlocks) {
  ProcessResult r = Emulate("overdraft", {"grid_hd128_causal_s300"});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/blackwell_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  EXPECT_NE((r.out + r.err).find("deadlock: setmaxnreg.inc waits"), std::string::npos) << EmulationTail(r.out) << r.err;
}

}  // namespace
}  // namespace kseek
