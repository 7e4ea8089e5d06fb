// The Hopper attention kernel (kernels/flash_attention_fwd/hopper.cu) on the
// CPU emulation of its PTX (tests/hopper_emu/, built once per configuration
// as build/bin/hopper_emu_*): every emulated shape against an fp64
// reference, with asynchronous work completing at issue and only at the
// waits, in shards that CTest runs side by side; the non-default switch
// settings, on their shapes; clusters of two blocks with K/V multicast,
// every run of them a clustered launch; and planted bugs, each of which
// must fail or stop with its reason.
#include <cctype>
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

// Runs build/bin/hopper_emu_<config> with `args` (a name filter, --shard).
ProcessResult Emulate(const std::string& config, const std::vector<std::string>& args) {
  return testing::RunEmulator("hopper_emu_" + config, args);
}

// Runs configuration `config` with `args` (a name filter, --shard,
// --captured): every run must pass, and there must be at least `min_runs`
// of them. Returns what it printed.
ProcessResult ExpectAllPassArgs(const std::string& config, const std::vector<std::string>& args,
                                int min_runs) {
  ProcessResult r = Emulate(config, args);
  std::string named;
  for (const std::string& a : args) named += (named.empty() ? "" : " ") + a;
  EXPECT_EQ(r.exit_code, 0) << named << "\n" << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(passed, runs) << named << "\n" << EmulationTail(r.out) << r.err;
  EXPECT_GE(runs, min_runs) << named << "\n" << EmulationTail(r.out) << r.err;
  return r;
}
// The same with one argument.
ProcessResult ExpectAllPass(const std::string& config, const std::string& arg, int min_runs) {
  return ExpectAllPassArgs(config, {arg}, min_runs);
}

// The number just before `words` in the driver's last line that has them
// ("emu: N clustered launches");
// -1 without one.
int EmuCount(const ProcessResult& r, const std::string& words) {
  const size_t at = r.out.rfind(words);
  if (at == std::string::npos) return -1;
  size_t from = at;
  while (from > 0 && std::isdigit(static_cast<unsigned char>(r.out[from - 1]))) --from;
  return from == at ? -1 : std::stoi(r.out.substr(from, at - from));
}

// The launches with clusters of more than one block.
int ClusteredLaunches(const ProcessResult& r) { return EmuCount(r, " clustered launches"); }

// A planted bug's run `r`: every launch ran (the plant still applies),
// some run failed and the emulator says so.
void ExpectPlantFailed(const ProcessResult& r) {
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/hopper_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_GT(runs, 0) << EmulationTail(r.out) << r.err;  // it ran, and failed
  EXPECT_LT(passed, runs) << EmulationTail(r.out) << r.err;
}

// Planted bug `config` on the shapes named by `filter`: ExpectPlantFailed.
void ExpectPlantFails(const std::string& config, const std::string& filter) {
  ExpectPlantFailed(Emulate(config, {filter}));
}

// Planted bug `config` on the shapes named by `filter`: the emulation stops
// with `reason` in its output.
void ExpectPlantStops(const std::string& config, const std::string& filter,
                      const std::string& reason) {
  ProcessResult r = Emulate(config, {filter});
  ASSERT_EQ(NotLaunched(r), "") << "update the plant in tests/hopper_emu/transform.py";
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  EXPECT_NE((r.out + r.err).find(reason), std::string::npos) << EmulationTail(r.out) << r.err;
}

// A test name for a shape-name filter ("w_" -> "w").
std::string TestNameOf(std::string filter) {
  if (filter.back() == '_') filter.pop_back();
  return filter;
}
std::string FilterName(const ::testing::TestParamInfo<const char*>& info) {
  return TestNameOf(info.param);
}

// A shape-name filter and the fewest runs (shapes x eager/lazy) it must
// select: a filter that silently matched fewer shapes would test less.
struct ShapeSet {
  const char* filter;
  int min_runs;
};
std::string ShapeSetName(const ::testing::TestParamInfo<ShapeSet>& info) {
  return TestNameOf(info.param.filter);
}

// The default build's shapes, one shard of kShards per test.
constexpr int kShards = 8;

class EveryShape : public ::testing::TestWithParam<int> {};

TEST_P(EveryShape, PassesOnItsShard) {
  // Over 100 runs (shapes x 2 modes) in all.
  ExpectAllPass("default",
                "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kShards),
                100 / kShards);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, EveryShape, ::testing::Range(0, kShards));

// Every shape again with each call as if captured into a CUDA graph (the
// emulation's --captured): the scratch is allocated in the graph (the work
// queue cleared by a memset there) instead of taken from the stream's.
class EveryShapeCaptured : public ::testing::TestWithParam<int> {};

TEST_P(EveryShapeCaptured, PassesOnItsShard) {
  constexpr int kCapturedShards = 2;
  const std::string shard =
      "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kCapturedShards);
  ExpectAllPassArgs("default", {"--captured", shard}, 100 / kCapturedShards);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, EveryShapeCaptured, ::testing::Range(0, 2));

// Every shape again with the calls going round 40 streams: each stream's
// scratch is its own (its work queue cleared at its first call, its
// partials buffer grown as its calls need), and past 16 streams with
// partials the least recently used buffer is freed. A stream's buffer is
// fresh (filled with NaNs) at its first call and holds an earlier call's
// partials after, so a kernel that reads partials it did not write fails
// either way. Some buffer must have been freed (grown or evicted).
class EveryShapeOnManyStreams : public ::testing::TestWithParam<int> {};

TEST_P(EveryShapeOnManyStreams, PassesOnItsShard) {
  constexpr int kShards = 2;
  const std::string shard = "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kShards);
  const ProcessResult r = Emulate("default", {"--streams=40", shard});
  EXPECT_EQ(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  const auto [passed, runs] = EmulationCounts(r);
  EXPECT_EQ(passed, runs) << EmulationTail(r.out) << r.err;
  EXPECT_GE(runs, 100 / kShards) << EmulationTail(r.out) << r.err;
  EXPECT_GT(EmuCount(r, " cudaFree calls"), 0) << EmulationTail(r.out);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, EveryShapeOnManyStreams, ::testing::Range(0, 2));

// The WGMMA kernel's work queue never cleared, neither a stream's nor a
// graph's: fresh scratch holds a count past every item (the emulation
// fills it so), so items are skipped and the reference check must fail,
// both for calls on a stream and for captured calls.
TEST(HopperEmulationTest, PlantedQueueNotClearedFails) {
  ExpectPlantFailed(Emulate("queue_not_cleared", {"w_hd128"}));
  ExpectPlantFailed(Emulate("queue_not_cleared", {"--captured", "w_hd128"}));
}

// The scratch's runtime calls in the thread's own capture mode: a captured
// call (the first, which creates the memory pool) must fail with the
// reason named, as CUDA refuses it under a capture in global mode; calls
// not captured still pass.
TEST(HopperEmulationTest, PlantedCaptureNotRelaxedFails) {
  const ProcessResult r = Emulate("capture_not_relaxed", {"--captured", "w_hd128"});
  EXPECT_NE(r.exit_code, 0) << EmulationTail(r.out) << r.err;
  EXPECT_NE(r.out.find("launch returned 1: cannot create a device memory pool"),
            std::string::npos)
      << EmulationTail(r.out) << r.err;
  // Not the stand-in kernel of a transform that no longer applies.
  EXPECT_EQ(r.out.find("transform.py"), std::string::npos) << EmulationTail(r.out) << r.err;
  ExpectAllPass("capture_not_relaxed", "w_hd128", 2);
}

// The non-default settings (the switches hopper_emu_switches is built with,
// tests/hopper_emu/CMakeLists.txt), each on the shapes it changes: few-tile
// shapes on the mma.sync kernel instead of the WGMMA kernel's split keys,
// one Q buffer at head_dim 64 and two at head_dim 128 (also by the causal
// short-sequence rule), 192-key tiles at head_dim 128 without causal
// masking, no short key tiles, Q barriers per consumer at every head_dim,
// 16-byte O stores at head_dim 64 only (the 4-byte stores at 128 and 256),
// the mma.sync kernel with one query head per row tile (no GQA packing, so
// GQA decode on either kernel), O rescaled under the next S in every WGMMA
// kernel, S over all of D's columns at head_dims 80-96, 80-key tiles on
// the D = 192 WGMMA kernel (whole items, causal, split keys), no
// ping-pong turns at head_dims above 128 and the first S outside the turns
// at 128, and the WGMMA consumers' loop as before v3h at head_dim 128 (one
// loop with the mask's test, arrivals in a branch, K and V waited for one
// after the other, descriptors built per operand) but split at 64 and 256
// for items of any length, and the WGMMA kernels' dependent launch once
// the producer has found the queue empty (the emulation runs grids in
// order, so this checks that path builds and still ends every block), and
// the decode kernel's narrow instances for head_dim at most 3/4 of D
// (KSEEK_FA_DECODE_NARROW: the pk_ and dim_ shapes of head_dim 96), and
// Q released right after a passed sum check (KSEEK_FA_SC_EARLY_RELEASE at
// every head dim; K is released after S, as S again reads it from global
// memory, in the default's rolled loop over the key blocks) by plain
// arrivals in a branch (the spike40 shapes, where sums are inf, take S
// again there).
class NonDefaultSwitches : public ::testing::TestWithParam<const char*> {};

TEST_P(NonDefaultSwitches, PassOnTheirShapes) { ExpectAllPass("switches", GetParam(), 2); }

INSTANTIATE_TEST_SUITE_P(HopperEmulation, NonDefaultSwitches,
                         ::testing::Values("s_hd128_bf16", "s_hd64", "w_hd64", "w_hd128",
                                           "w_hd256", "pk_", "dim_", "spike40"),
                         FilterName);

// A second set of switches (hopper_emu_second), which the first cannot
// hold together with its own: head dims 136-192 on D = 256 with narrow S and P V (KSEEK_FA_D192=0; the
// first set computes S over all of D there), and the epilogue's MUFU
// reciprocal and log2 and the items located by multiplications at every
// head dim (the defaults have them at 64 and 128 only), O stored by TMA
// on head_dim 64's 128-key ones, and the lazy rescale at head_dim 64 too (the r_ shapes:
// row maxima that move after the first tiles), and 160-key tiles with two Q buffers at head_dim 128 (the k700
// non-causal w_ and r_ shapes; the default's are 144 keys), and GQA
// decode groups of 17-32 rows on the decode kernel's long splits wherever
// version 1 would split their keys, in blocks of 32 rows, two row tiles
// per warp at head_dim 64 and 128 (the g_ shapes of 3 and 4 queries x 8
// heads; groups of at most 16 rows take the long splits by default), the
// combine behind the decode kernel a block per row from two splits
// (KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS), and O staged in
// the last key tile's V for items of any length at D = 256 and D = 192
// (the default: 32 tiles or more) and on head_dim 128's 160-key tiles
// (the k700 w_ and r_ shapes), and a step's V
// waited for after its S is issued at D = 256 and D = 192 too
// (KSEEK_FA_V_AFTER_S; the default has it at 64 and 128), and the K/V
// ring's stages and phases divided unsigned (KSEEK_FA_RING_UNSIGNED) and
// the tiles that need no mask without the softmax's test for a row that
// has seen no key, at every head dim (KSEEK_FA_UNMASKED_NO_INF_TEST), and
// the decode kernel's narrow instances (KSEEK_FA_DECODE_NARROW; the g_
// shapes of head_dim 80, 96 and 192, the first two on the long splits),
// and head_dim 128's 176-key tiles with causal masking
// (KSEEK_FA_HD128_CAUSAL_WIDE_KEYS; past 512 keys: the causal w_ and p_
// head_dim 128 shapes of 450-1000 keys, and sections of GQA heads on 4200),
// and K held until the sum check and released right after a passed one,
// after the slow path where it failed (KSEEK_FA_SC_EARLY_RELEASE; the r_
// spike40 shapes fail it at head_dim 128), there computing S again from
// the K in shared memory (KSEEK_FA_SC_K_GLOBAL=0; the default build reads
// it from global memory).
class SecondSwitches : public ::testing::TestWithParam<ShapeSet> {};

TEST_P(SecondSwitches, PassOnTheirShapes) {
  ExpectAllPass("second", GetParam().filter, GetParam().min_runs);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, SecondSwitches,
                         ::testing::Values(ShapeSet{"w_", 20}, ShapeSet{"dim_", 20},
                                           ShapeSet{"r_", 14}, ShapeSet{"g_", 20},
                                           ShapeSet{"p_hd128", 4},
                                           ShapeSet{"sections_causal", 2}),
                         ShapeSetName);

// The decode kernel's narrow instances with S's last 16 columns left out
// (hopper_emu_narrow_short): head_dim 96 on D = 128's long splits and its
// short ones, and 192 on D = 256, must fail, so those instances are the
// ones that run.
TEST(HopperEmulation, DecodeNarrowWithoutLastColumnsFails) {
  ExpectPlantFails("narrow_short", "g_hd96_bf16_q1_k8000_gqa4");
  ExpectPlantFails("narrow_short", "dim_hd96_bf16_split_q1_k1000_b2_h2");
  ExpectPlantFails("narrow_short", "g_hd192_f16_q1_k12000_gqa8");
}

// Version 1 (the mma.sync kernel) with its narrow instances on the shapes
// the decode kernel would take (hopper_emu_narrow_v1: KSEEK_FA_DECODE_KERNEL=0),
// the g_ and pk_ shapes (head_dim 80, 96 and 192 among them); with S's
// last 16 columns left out (hopper_emu_narrow_v1_short) head_dim 96 and
// 192 must fail, so those instances are the ones that run.
class NarrowVersion1 : public ::testing::TestWithParam<ShapeSet> {};

TEST_P(NarrowVersion1, PassOnTheirShapes) {
  ExpectAllPass("narrow_v1", GetParam().filter, GetParam().min_runs);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, NarrowVersion1,
                         ::testing::Values(ShapeSet{"g_", 20}, ShapeSet{"pk_", 16}),
                         ShapeSetName);

TEST(HopperEmulation, Version1NarrowWithoutLastColumnsFails) {
  ExpectPlantFails("narrow_v1_short", "g_hd96_bf16_q1_k8000_gqa4");
  ExpectPlantFails("narrow_v1_short", "pk_hd96_bf16_q1_k2000_mqa12");
  ExpectPlantFails("narrow_v1_short", "g_hd192_f16_q1_k12000_gqa8");
}

// The paths that v3k's defaults replaced (hopper_emu_replaced), kept as
// switches: O stored without TMA (the staged and the wide stores), IEEE
// division and log2f in the epilogue, the items located by integer
// divisions, 3 K/V stages on the 128-key head_dim 128 kernel, the wide key
// tiles for head_dim 128 with few keys; and the decode switches measured
// at no gain: the mma.sync kernels' splits at the best wave efficiency,
// and the decode kernel with two row tiles per warp for row groups of
// 17-32 rows (the g_ shapes of 3 and 4 queries x 8 heads); and O rescaled
// in every tile (the lazy rescale off, on the r_ shapes too); and what
// v3m replaced: the combine as a plain launch after split keys (the
// emulation runs grids in order either way, so this checks that path's
// host side) and 128-key tiles on head_dim 128's two-Q-buffer kernel; and
// what v3n replaced: GQA decode groups of at most 16 rows on version 1's
// packed rows where it splits the keys 2-11 ways (the pk_ shapes of 1
// query x 16 and 12 heads: 10 and 7 splits there, the decode kernel's long
// splits by default), and O of items of 32 or more key tiles at D = 256
// and D = 192 in 16-byte stores (the w_ shapes of 2,600 and 4,000 keys);
// and what v3s replaced: K and V of a step both in before its turn at
// head_dim 64 and 128 (KSEEK_FA_V_AFTER_S=0); and what v3t and v3u
// replaced: the K/V ring's stage and phase computed signed, the softmax's
// test for a row without keys on every key tile, the producer's next
// item asked for after its last V stage, and the split loop only for
// items of 32 or more key tiles at head_dim 64 and on the D = 192 kernel.
class ReplacedPaths : public ::testing::TestWithParam<ShapeSet> {};

TEST_P(ReplacedPaths, PassOnTheirShapes) {
  ExpectAllPass("replaced", GetParam().filter, GetParam().min_runs);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, ReplacedPaths,
                         ::testing::Values(ShapeSet{"w_", 16}, ShapeSet{"dim_", 16},
                                           ShapeSet{"g_", 16}, ShapeSet{"x_", 16},
                                           ShapeSet{"r_", 14}, ShapeSet{"pk_", 16}),
                         ShapeSetName);

// Clusters of two blocks (hopper_emu_cluster: KSEEK_FA_CLUSTER on head_dim
// 128's, D = 256's and D = 192's kernels), the c_ shapes: whole items
// without causal masking, a pair of 128-row query tiles per cluster and
// several pairs per cluster, each block loading half of every K and V
// tile into both blocks' stages by TMA multicast; head_dim 128's 144- and
// 128-key tiles (two Q buffers) and 176-key tiles, 256's 80-key tiles
// with O staged in the last V tile from 32 tiles on, D = 192's 112-key
// tiles, partial last query and key tiles, head dims under D. Every run
// must be a clustered launch, so the cluster path is the one emulated.
TEST(HopperEmulationTest, ClustersPassClustered) {
  const ProcessResult r = ExpectAllPass("cluster", "c_", 22);
  EXPECT_GE(ClusteredLaunches(r), EmulationCounts(r).second) << EmulationTail(r.out) << r.err;
}

// Clusters with causal masking too (hopper_emu_causal_cluster:
// KSEEK_FA_CAUSAL_CLUSTER=14), the cz_ shapes: the block of a pair's
// earlier query tile walks the pair's key tiles with those past its rows
// masked; the pairs from the clusters' queue (rank 0 takes each and hands
// it to rank 1 through a ring of slots in rank 1's shared memory:
// KSEEK_FA_CAUSAL_CLUSTER_QUEUE), and in the static order whose every
// other round runs backwards (hopper_emu_causal_cluster_static);
// head_dim 128's two-Q-buffer, 128-key and 176-key (from the end)
// instances, D = 256 and D = 192, with rounds partly empty and more
// rounds than the ring has slots. The shapes run one after another on one
// stream, so a queue left set fails a later run; and captured into
// graphs (the queue cleared by each graph). Every run must be a clustered
// launch.
TEST(HopperEmulationTest, CausalClustersPassClustered) {
  for (const char* config : {"causal_cluster", "causal_cluster_static"}) {
    const ProcessResult r = ExpectAllPass(config, "cz_", 16);
    EXPECT_GE(ClusteredLaunches(r), EmulationCounts(r).second) << EmulationTail(r.out) << r.err;
  }
  ExpectAllPassArgs("causal_cluster", {"--captured", "cz_hd128"}, 6);
}

// The clusters' queue left where a call ended
// (hopper_emu_cluster_queue_no_reset): the stream's next call (the
// shape's second run) starts past its pairs, and the check must fail.
TEST(HopperEmulationTest, PlantedClusterQueueLeftSetFails) {
  ExpectPlantFails("cluster_queue_no_reset", "cz_hd128_bf16_causal_q512");
}

// The backward rounds planted off by one (hopper_emu_causal_cluster_order):
// each skips its first pair, whose rows are never written, so the check
// must fail on a shape with a backward round (4 pairs on 2 clusters).
TEST(HopperEmulationTest, PlantedCausalClusterOrderFails) {
  const ProcessResult r = Emulate("causal_cluster_order", {"cz_hd128_f16_causal_q1000"});
  ExpectPlantFailed(r);
  EXPECT_GT(ClusteredLaunches(r), 0) << EmulationTail(r.out) << r.err;
}

// The last rounds' key tiles in even shares over the clusters
// (hopper_emu_tail: KSEEK_FA_TAIL_SPLIT=14), the tl_ shapes: whole pairs
// first, then each cluster's share pair by pair, a pair split between two
// shares stored as partials by the one and merged by the other (whichever
// counts itself last, into O in memory); fewer pairs than clusters; head_dim 128's two
// kernels, D = 256 and D = 192. The shapes run one after another on one
// stream, so a counter left set fails a later run; and captured into
// graphs (the counters cleared by each graph). Every run must be a
// clustered launch.
TEST(HopperEmulationTest, TailSharesPassClustered) {
  // With a pair's first segment merging the others' rows where they are
  // done (the clusters run in a shuffled order, so some pairs merge and
  // some combine), and with every split pair combined by its last segment
  // (hopper_emu_tail_no_merge); and with the shares as a grid of their own
  // after the whole pairs' grid (hopper_emu_tail_launches: two clustered
  // launches a call).
  for (const char* config : {"tail", "tail_no_merge", "tail_launches"}) {
    const ProcessResult r = ExpectAllPass(config, "tl_", 16);
    EXPECT_GE(ClusteredLaunches(r), EmulationCounts(r).second) << EmulationTail(r.out) << r.err;
    if (std::string(config) == "tail_launches")  // the shapes with whole pairs: two grids
      EXPECT_GT(ClusteredLaunches(r), EmulationCounts(r).second) << EmulationTail(r.out) << r.err;
    ExpectAllPassArgs(config, {"--captured", "tl_hd128"}, 8);
  }
}

// A pair's first segment merging the others' rows without rescaling its
// own (hopper_emu_tail_merge_unscaled) must fail: the shapes take the
// merge.
TEST(HopperEmulationTest, PlantedTailMergeUnscaledFails) {
  ExpectPlantFails("tail_merge_unscaled", "tl_");
}

// A pair's last segment combining every share's rows but the last share's
// (hopper_emu_tail_combine_part, every split pair combined) must fail.
TEST(HopperEmulationTest, PlantedTailCombineShortFails) {
  ExpectPlantFails("tail_combine_part", "tl_hd128_f16_full_q1000");
}

// The whole pairs' grid stopping a pair short of the shares' grid's first
// segment (hopper_emu_tail_launch_short): that pair's rows are never
// written, and the check must fail on a shape with whole pairs.
TEST(HopperEmulationTest, PlantedTailLaunchShortFails) {
  ExpectPlantFails("tail_launch_short", "tl_hd128_bf16_full_q1280");
}

// The counters left set after a call (hopper_emu_tail_no_reset): the
// stream's next call (the shape's second run) finds its pairs' counters
// past their segments, nobody merges, and the check must fail.
TEST(HopperEmulationTest, PlantedTailCountersLeftSetFail) {
  ExpectPlantFails("tail_no_reset", "tl_hd128_bf16_full_q1280");
}

// The same with O staged in the last V tile for every item at D = 256 and
// D = 192 (hopper_emu_cluster_in_v): that V is released to both blocks'
// producers once the stores have read it; and the key tiles walked from
// the end at every clustered head dim (KSEEK_FA_KEYS_FROM_END_CLUSTER=14),
// both producers in the same order; and with causal masking
// (KSEEK_FA_CAUSAL_CLUSTER=14, the cz_ shapes) and the tail's shares
// (KSEEK_FA_TAIL_SPLIT=14, the tl_ shapes: a tail segment's O not staged
// in V).
TEST(HopperEmulationTest, ClustersWithStagedVPassClustered) {
  for (const char* filter : {"c_hd2", "c_hd192", "c_hd160", "cz_", "tl_"}) {
    const ProcessResult r = ExpectAllPass("cluster_in_v", filter, 2);
    EXPECT_GE(ClusteredLaunches(r), EmulationCounts(r).second) << EmulationTail(r.out) << r.err;
  }
}

// Clusters whose consumers release a K/V stage on their own block's empty
// barrier only, that barrier counting only the block's own warps: a
// block's producer multicasts the next tile into a stage that the other
// block's consumers may still read. The emulation runs one block of a
// cluster as far ahead of the other as the protocol lets it (a
// round-robin schedule of the two misses this plant), so the reference
// check must fail (or a barrier check stop it inside a cluster).
TEST(HopperEmulationTest, PlantedClusterOwnReleaseFails) {
  for (const char* filter : {"c_hd128_bf16_full_q512", "c_hd256_bf16_full_q512"}) {
    const ProcessResult r = Emulate("cluster_own_release", {filter});
    ExpectPlantFailed(r);
    EXPECT_TRUE(ClusteredLaunches(r) > 0 || (r.out + r.err).find(" cluster rank ") != std::string::npos)
        << filter << "\n" << EmulationTail(r.out) << r.err;
  }
}

// TMA stores without the wait that frees a staging buffer: where stores
// complete only at the waits (the emulation's lazy mode), a warp's later
// items overwrite what its earlier stores had still to read, and the
// reference check must fail; so the stores run, from those buffers. (The
// build runs head_dim 128 on 128-key tiles: the default 160-key ones have
// no room for the stores' buffers.)
// Q in the consumers' registers for S (hopper_emu_q_regs: KSEEK_FA_Q_REGS=3,
// head_dim 64 and 128 and the narrow 80/96, on every key tile up to 160
// keys, the short ones too; the default build has v4i's head_dim 128 on
// 128-key tiles):
// every shape, in shards, each eager and lazy.
class QInRegisters : public ::testing::TestWithParam<int> {};

TEST_P(QInRegisters, PassesOnItsShard) {
  constexpr int kQShards = 4;
  ExpectAllPass("q_regs",
                "--shard=" + std::to_string(GetParam()) + "/" + std::to_string(kQShards),
                240 / kQShards);
}

INSTANTIATE_TEST_SUITE_P(HopperEmulation, QInRegisters, ::testing::Range(0, 4));

// The same with the Q buffer released before the warps have loaded their
// rows: the producer loads the next item's Q over them (one Q buffer: head_dim
// 128 with causal masking).
TEST(HopperEmulationTest, PlantedQRegistersEarlyReleaseFails) {
  ExpectPlantFails("q_regs_early_release", "w_hd128_f16_causal");
}

TEST(HopperEmulationTest, PlantedTmaStoreRaceFails) {
  ExpectPlantFails("tma_race", "w_hd128_bf16_full");
}

// O staged in the last key tile's V (KSEEK_FA_TMA_IN_V, items of 32 or
// more tiles on the D = 256 and D = 192 kernels) without the barrier that
// waits for the other consumer's last P V: it reads V overwritten by O,
// and the reference check must fail, so the staged stores run there.
TEST(HopperEmulationTest, PlantedStagingInVWithoutBarrierFails) {
  ExpectPlantFails("in_v_no_barrier", "w_hd256_bf16_full_q130_k2600");
  ExpectPlantFails("in_v_no_barrier", "w_hd192_f16_causal_q140_k4000");
}

// TMA stores without the fence that makes a warp's stmatrix writes visible
// to the async proxy: the emulation must stop at the store and name it.
TEST(HopperEmulationTest, PlantedTmaStoreWithoutFenceFails) {
  ExpectPlantStops("tma_fence", "w_hd128_bf16_full", "written without fence.proxy.async");
}

// An error in the decode kernel's second row tile: the 32-row GQA group at
// head_dim 64 (4 queries x 8 heads), which the defaults run with two row
// tiles per warp, must fail, so that path is the one emulated.
TEST(HopperEmulationTest, PlantedSecondRowTileErrorFails) {
  ExpectPlantFails("second_tile", "g_hd64_bf16_q4_k6000_gqa8_causal");
}

// The lazy rescale (the default at head_dim 128) with O never rescaled
// once a row's reference moves after its first tile: on queries with 6x
// the task's spread, whose row maxima move in later tiles, the reference
// check must fail, so the rescale that the moved rows need is emulated.
TEST(HopperEmulationTest, PlantedLazyRescaleSkipFails) {
  ExpectPlantFails("lazy_skip", "r_hd128_bf16_split_q200_k3000");
  ExpectPlantFails("lazy_skip", "r_hd256_f16_causal_q200_k600");
}

// The same where O's rescale runs under the next tile's S: head_dim 128
// without causal masking on 160-key tiles with two Q buffers (700 keys)
// and on 176-key tiles (4400 keys).
TEST(HopperEmulationTest, PlantedLazyRescaleUnderSSkipFails) {
  ExpectPlantFails("lazy_skip_under_s", "r_hd128_bf16_full_q130_k700");
  ExpectPlantFails("lazy_skip_under_s", "r_hd128_f16_full_q130_k4400");
}

// The softmax without maxima (KSEEK_FA_SUM_CHECK, the default at head_dim
// 64 and 128): where a warp's test fails with finite sums (queries with 6x
// the task's spread, whose maxima move in later tiles) its rows' references
// move, and with the running sums left at the old scale the reference
// check must fail; where a key's score passes the rows' references by more
// than 2^128 (one key 40x the others) the sums are inf, and without S
// computed again it must fail too. So both slow paths are emulated.
TEST(HopperEmulationTest, PlantedSumCheckRebaseFails) {
  ExpectPlantFails("sum_check_no_rebase", "r_hd128_f16_full_q130_k4400_qstd6");
  ExpectPlantFails("sum_check_no_rebase", "r_hd96_bf16_full_q150_k900_qstd6");
}
TEST(HopperEmulationTest, PlantedSumCheckRecomputeFails) {
  ExpectPlantFails("sum_check_no_recompute", "r_hd64_bf16_full_q300_k900_spike40");
  ExpectPlantFails("sum_check_no_recompute", "r_hd128_f16_causal_q400_k1000_spike40");
}

// The causal mask one key too lenient: the reference check must fail.
TEST(HopperEmulationTest, PlantedMaskBugFails) { ExpectPlantFails("mask_bug", "w_hd128_f16_causal"); }

// setmaxnreg moves registers within the block only: a producer that keeps
// 32 registers while two consumers take 240 each asks for more than the
// 3 x 168 the block has at launch, and the consumers' setmaxnreg.inc waits
// forever on the device. The kernel's static_assert rules that out for its
// own counts; here the count is planted past it, and the emulation must
// stop with the deadlock named.
TEST(HopperEmulationTest, PlantedRegisterOverdraftDeadlocks) {
  ExpectPlantStops("overdraft", "w_hd128_f16_causal", "deadlock: setmaxnreg.inc waits");
}

// The item trace's diagnostic build (KSEEK_FA_TRACE, read on the device by
// bench/item_trace.py): after every call the emulation checks its records
// through kseek_fa_trace_reset and kseek_fa_trace_read (emu_host.h
// TraceFault: one consumer and one producer record per round of the same
// item, rounds without gaps, each record's points in the order stamped,
// the rounds' query rows covering every (batch, head)), besides O and the
// LSE. On the w_ shapes (one block and many, split keys, GQA, causal) and
// the clustered c_ shapes.
TEST(HopperEmulationTest, TraceBuildRecordsEveryRound) {
  ProcessResult r = ExpectAllPass("trace", "w_", 30);
  EXPECT_GT(EmuCount(r, " traced rounds"), 100) << EmulationTail(r.out);
  r = ExpectAllPass("trace", "c_", 22);
  EXPECT_GT(ClusteredLaunches(r), 0) << EmulationTail(r.out);
  EXPECT_GT(EmuCount(r, " traced rounds"), 20) << EmulationTail(r.out);
}

// The records as the kernel code lays them out, read by the device's own
// reader: the emulation writes a call's records (--trace-json) and
// bench/item_trace.py --parse summarises them. A causal shape of 700 rows
// on one SM: 6 rounds of 128-row items, 1 to 6 key tiles each.
TEST(HopperEmulationTest, TraceRecordsReadByItemTrace) {
  const std::string dir = testing::TempDir("emu_trace_json");
  const ProcessResult w =
      Emulate("trace", {"w_hd128_f16_causal_q700_k700", "--trace-json=" + dir});
  ASSERT_EQ(w.exit_code, 0) << EmulationTail(w.out) << w.err;
  const auto [passed, runs] = EmulationCounts(w);
  ASSERT_EQ(runs, 2) << EmulationTail(w.out);  // eager and lazy
  ASSERT_EQ(passed, runs) << EmulationTail(w.out);
  const ProcessResult p = testing::RunProcess(
      {"/usr/bin/env", "python3",
       testing::SourceDir() + "/kernels/flash_attention_fwd/bench/item_trace.py", "--parse",
       dir + "/w_hd128_f16_causal_q700_k700_lazy.json", "--json", "-"});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_NE(p.out.find("\"blocks\": 1,"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("\"rounds\": 6,"), std::string::npos) << p.out;
  for (const char* tiles : {"\"1\": {", "\"6\": {"})
    EXPECT_NE(p.out.find(tiles), std::string::npos) << tiles << "\n" << p.out;
  EXPECT_NE(p.out.find("\"to_last_v\""), std::string::npos) << p.out;  // producer records
}

// The consumer's record one key tile off the producer's: the check fails.
TEST(HopperEmulationTest, PlantedTraceItemFails) {
  ExpectPlantStops("trace_item", "w_hd128_f16_causal",
                   "the consumer's and the producer's items differ");
}

}  // namespace
}  // namespace kseek
