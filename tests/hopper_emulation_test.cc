// The Hopper attention kernel (kernels/flash_attention_fwd/hopper.cu) on the
// CPU emulation of its PTX (tests/hopper_emu/run.sh):
// every emulated shape against an fp64 reference, with asynchronous work
// completing at issue and only at the waits; the non-default switch
// settings, on their shapes; a planted masking bug, which must fail; and a
// planted register overdraft, which must deadlock.
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "test_util.h"

namespace kseek {
namespace {

using testing::ProcessResult;

ProcessResult Emulate(const std::vector<std::string>& args,
                      const std::string& hopper_cu = "") {
  std::vector<std::string> argv = {"/usr/bin/env"};
  if (!hopper_cu.empty()) argv.push_back("HOPPER_CU=" + hopper_cu);
  argv.push_back("EMU_BUILD_DIR=" + testing::TempDir("hopper_emu"));
  argv.push_back("bash");
  argv.push_back(testing::SourceDir() +
                 "/tests/hopper_emu/run.sh");
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

TEST(HopperEmulationTest, EveryShapePasses) {
  ProcessResult r = Emulate({});
  EXPECT_EQ(r.exit_code, 0) << Tail(r.out) << r.err;
  const auto [passed, runs] = Counts(r);
  EXPECT_EQ(passed, runs) << Tail(r.out) << r.err;
  EXPECT_GE(runs, 100) << Tail(r.out) << r.err;
}

// The non-default settings: few-tile shapes on the mma.sync kernel instead
// of the WGMMA kernel's split keys, one Q buffer at head_dim 64 and two at
// head_dim 128 (also by the causal short-sequence rule), 192-key tiles at
// head_dim 128 without causal masking, no short key tiles, Q barriers per
// consumer at every head_dim, 16-byte O stores at head_dim 64 only (the
// 4-byte stores at 128 and 256), and the mma.sync kernel with one query
// head per row tile (no GQA packing, so GQA decode on either kernel).
TEST(HopperEmulationTest, NonDefaultSwitchesPass) {
  const std::vector<std::string> on = {
      "-DKSEEK_FA_WGMMA_SPLIT_KEYS=0",     "-DKSEEK_FA_HD64_Q_BUFFERS=1",
      "-DKSEEK_FA_HD128_Q_BUFFERS=2",
      "-DKSEEK_FA_HD128_FULL_BLOCK_N=192", "-DKSEEK_FA_SHORT_KEYS=0",
      "-DKSEEK_FA_HD128_CAUSAL_Q2_UPTO=2048",
      "-DKSEEK_FA_Q_PER_CONSUMER=7",       "-DKSEEK_FA_WIDE_STORES=1",
      "-DKSEEK_FA_MMA_PACK_GQA=0"};
  for (const std::string filter :
       {"s_hd128_bf16", "s_hd64", "w_hd64", "w_hd128", "w_hd256", "pk_"}) {
    std::vector<std::string> args = on;
    args.push_back(filter);
    ProcessResult r = Emulate(args);
    EXPECT_EQ(r.exit_code, 0) << filter << "\n" << Tail(r.out) << r.err;
    const auto [passed, runs] = Counts(r);
    EXPECT_EQ(passed, runs) << filter << "\n" << Tail(r.out) << r.err;
    EXPECT_GE(runs, 2) << filter << "\n" << Tail(r.out) << r.err;
  }
}

// hopper.cu with its one occurrence of `right` replaced by `wrong`, written
// to a fresh folder; "" when `right` is not there (the test then fails
// and names the change to look for).
std::string PlantInHopper(const std::string& right, const std::string& wrong) {
  std::string src = testing::ReadFile(testing::SourceDir() +
                                      "/kernels/flash_attention_fwd/hopper.cu");
  const size_t at = src.find(right);
  if (at == std::string::npos) return "";
  src.replace(at, right.size(), wrong);
  const std::string path = testing::TempDir("hopper_mut") + "/hopper.cu";
  testing::WriteFile(path, src);
  return path;
}

TEST(HopperEmulationTest, PlantedMaskBugFails) {
  const std::string path =
      PlantInHopper("if (key >= limit0) s[n][e] = -INFINITY;",
                    "if (key > limit0) s[n][e] = -INFINITY;");
  ASSERT_FALSE(path.empty()) << "MaskScores changed: update this test";
  ProcessResult r = Emulate({"w_hd128_f16_causal"}, path);
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
  const std::string path = PlantInHopper(
      "LowerRegisters<C::kProducerRegisters>();", "LowerRegisters<32>();");
  ASSERT_FALSE(path.empty()) << "the producer changed: update this test";
  ProcessResult r = Emulate({"w_hd128_f16_causal"}, path);
  EXPECT_NE(r.exit_code, 0) << Tail(r.out) << r.err;
  EXPECT_NE((r.out + r.err).find("deadlock: setmaxnreg.inc waits"),
            std::string::npos)
      << Tail(r.out) << r.err;
}

}  // namespace
}  // namespace kseek
