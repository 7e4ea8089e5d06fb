#!/usr/bin/env python3
"""hopper.cu -> hopper_emu.inc: the kernel file with its PTX wrappers
replaced by the emulated ones, launches turned into emu::LaunchKernel calls
and its inline-asm exponential, reciprocal and log2 turned into exp2f,
1 / x and log2f.

  transform.py HOPPER_CU EMU_WRAPPERS EMU_WGMMA OUT [--plant=NAME] [-DNAME=VALUE ...]

--plant=NAME first plants one of the bugs below, which the emulation must
catch (tests/hopper_emulation_test.cc). When hopper.cu's structure has
changed so that the transform (or the plant) no longer applies, OUT is a
kernel whose every launch fails with the reason: the build goes on, and the
emulation's tests fail and name what to update.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transform_common import expect, host_side, main, plant  # noqa: E402

# A planted bug: the one occurrence of the first text replaced by the second
# (or a list of such pairs, each applied).
PLANTS = {
    # The causal mask lets each query see one key too many.
    "mask_bug": ("if (key >= limit0) s[n][e] = -INFINITY;",
                 "if (key > limit0) s[n][e] = -INFINITY;"),
    # The producer keeps 32 registers while two consumers take 240 each:
    # more than the block's 3 x 168, so setmaxnreg.inc waits forever.
    "overdraft": ("LowerRegisters<C::kProducerRegisters>();", "LowerRegisters<32>();"),
    # With TMA stores, a warp writes its staging buffer again without
    # waiting until the previous store from it has read it.
    "tma_race": ("      if (lane == 0) BulkWaitRead<kBuffers - 1>();\n",
                 "      if (lane == 0 && kBuffers < 0) BulkWaitRead<kBuffers - 1>();\n"),
    # With O staged in the last tile's V (KSEEK_FA_TMA_IN_V), a consumer
    # writes it there without waiting for the other consumer's last P V.
    "in_v_no_barrier": ("      NamedBarrier(kStagedOBarrier, C::kConsumers * kWgThreads);\n",
                        ""),
    # With TMA stores, the stmatrix writes are not fenced for the async
    # proxy before the store reads them.
    "tma_fence": ("      FenceProxyAsync();\n      __syncwarp();\n      if (lane == 0) TmaStore4d(",
                  "      __syncwarp();\n      if (lane == 0) TmaStore4d("),
    # The lazy rescale (KSEEK_FA_LAZY_RESCALE) never rescales O after a
    # row's reference has moved in a later tile (O rescaled after the
    # softmax: the 128-key and shorter tiles).
    "lazy_skip": ("          if (rescale) RescaleRows<KO>(st, alpha);\n        }\n        PackScores<T, kN>(sc, pk);\n",
                  "          if (!kLazy) RescaleRows<KO>(st, alpha);\n        }\n        PackScores<T, kN>(sc, pk);\n"),
    # The same where O's rescale runs under the next tile's S (the 144- and
    # 176-key head_dim 128 tiles, KSEEK_FA_RESCALE_UNDER_S).
    "lazy_skip_under_s": ("          if (rescale) RescaleRows<KO>(st, alpha);  // to the pending tile's maxima\n",
                          "          if (!kLazy) RescaleRows<KO>(st, alpha);  // to the pending tile's maxima\n"),
    # The softmax without maxima (KSEEK_FA_SUM_CHECK): a warp whose test
    # failed with finite sums moves its rows' references but leaves the
    # running sums at the old scale.
    "sum_check_no_rebase": ("    st.row_sum[i] = (st.row_sum[i] + tile[i]) * r;\n",
                            "    st.row_sum[i] = st.row_sum[i] + tile[i];\n"),
    # The same, where the sums were inf or NaN: the softmax runs on P
    # instead of S computed again.
    # (KSEEK_FA_SC_K_GLOBAL's S again from global memory too.)
    "sum_check_no_recompute": ("              {  // S again\n", "              if (false) {  // S again\n"),
    # The decode kernel with two row tiles per warp: the second tile's
    # first score is off by one, so only 17-32-row groups go wrong.
    "second_tile": ("      UpdateSoftmax<D, kDecodeKeys, KD>(s, st[t], p.scale_log2);\n",
                    "      if (t == 1) s[0][0] += 1.f;\n"
                    "      UpdateSoftmax<D, kDecodeKeys, KD>(s, st[t], p.scale_log2);\n"),
    # The item trace (KSEEK_FA_TRACE): the consumer records one key tile
    # more than the producer loads for the item.
    "trace_item": ("      TraceItem(n, 1, w.q0, w.tile_end - w.tile_begin, w.hq, w.b);\n",
                   "      TraceItem(n, 1, w.q0, w.tile_end - w.tile_begin + 1, w.hq, w.b);\n"),
    # The decode kernel's narrow instances (KSEEK_FA_DECODE_NARROW) leave out
    # S's last 16 columns.
    "narrow_short": ("  for (int kk = 0; kk < KD / 16; ++kk) {\n    uint32_t a[4];\n",
                     "  for (int kk = 0; kk < KD / 16 - (KD < D); ++kk) {\n    uint32_t a[4];\n"),
    # The WGMMA kernel's work queue never cleared: neither a stream's queue
    # (calls not captured) nor a graph's (captured calls, the emulation's
    # --captured), so a launch starts from whatever the fresh memory held
    # (the emulation fills it with 0xFF bytes).
    "queue_not_cleared": [
        ("    const cudaError_t err = cudaMemsetAsync(pair, 0, 2 * sizeof(int), stream_);\n",
         "    const cudaError_t err = cudaSuccess;\n"),
        ("    err = cudaMemsetAsync(m, 0, count * sizeof(int), stream_);\n",
         "    err = cudaSuccess;\n"),
    ],
    # The scratch's runtime calls made in the thread's own capture mode: a
    # captured call's first use creates the memory pool, which CUDA (and
    # the emulation) refuses under a capture unless the mode is relaxed.
    "capture_not_relaxed": ("    RelaxedCaptureMode relaxed;\n    std::lock_guard<std::mutex> lock(g_scratch_mutex);\n",
                            "    std::lock_guard<std::mutex> lock(g_scratch_mutex);\n"),
    # Clusters (KSEEK_FA_CLUSTER): the consumers release a K/V stage on
    # their own block's empty barrier only, and that barrier counts only
    # the block's own warps, so a block's producer multicasts into a stage
    # the other block's consumers may still read.
    "cluster_own_release": [
        ("      BarrierInit(empty_k(s), CL * C::kConsumers * kWgThreads / 32);\n"
         "      BarrierInit(empty_v(s), CL * C::kConsumers * kWgThreads / 32);\n",
         "      BarrierInit(empty_k(s), C::kConsumers * kWgThreads / 32);\n"
         "      BarrierInit(empty_v(s), C::kConsumers * kWgThreads / 32);\n"),
        ("    if constexpr (kCluster) ArriveClusterIf(PeerAddress(bar, peer), pred);\n", ""),
    ],
    # Clusters with causal masking (KSEEK_FA_CAUSAL_CLUSTER): the backward
    # rounds off by one, so each such round skips its first pair (and takes
    # the next round's first twice).
    "causal_cluster_order": ("        item = (n + 1) * clusters + (back ? clusters - 1 - c : c);\n",
                             "        item = (n + 1) * clusters + (back ? clusters - c : c);\n"),
    # Causal pairs from the clusters' queue (KSEEK_FA_CAUSAL_CLUSTER_QUEUE)
    # left where a call ended, so the stream's next call starts past its
    # pairs.
    "cluster_queue_no_reset": ("          reset_queue(2);\n", ""),
    # The last rounds' key tiles in shares (KSEEK_FA_TAIL_SPLIT): a pair's
    # last segment combines every segment's partials but the last share's.
    "tail_combine_part": ("      for (int c = c_lo; c <= c_hi; ++c) {\n        const int64_t index",
                          "      for (int c = c_lo; c < c_hi; ++c) {\n        const int64_t index"),
    # The same with the last segment leaving its counter where it is, so
    # the stream's next call finds it past the pair's segments.
    # (both ways of finishing a pair: its first segment merging, the last
    # one combining).
    "tail_no_reset": [
        ("        if (lane == 0) *t_count = 0;  // for the stream's next call\n", ""),
        ("    if (merged && lane == 0) *t_count = 0;  // for the stream's next call\n", ""),
    ],
    # The tail's shares as a grid of their own (KSEEK_FA_TAIL_LAUNCHES)
    # with the whole pairs' grid stopping a pair short: that pair's rows
    # are never written.
    "tail_launch_short": ("      items = p.tail_first;\n", "      items = p.tail_first - 1;\n"),
    # Q in registers (KSEEK_FA_Q_REGS): the Q buffer released before the
    # warps have loaded their rows, so the producer may load the next
    # item's Q over them.
    "q_regs_early_release": (
        "      LoadQRegisters<KD>(qf, q_rows, warp % 4, lane);\n"
        "      __syncwarp();\n"
        "      if (lane == 0) Arrive(q_empty(qb, qpart));  // the rows are in registers\n",
        "      if (lane == 0) Arrive(q_empty(qb, qpart));\n"
        "      for (int spin = 0; spin < 64; ++spin) __syncwarp();\n"
        "      LoadQRegisters<KD>(qf, q_rows, warp % 4, lane);\n"),
    # The tail pair's first segment merging the others' rows without
    # rescaling its own (KSEEK_FA_TAIL_MERGE): its accumulators and total
    # stay at its own maximum while the weights are taken at the largest.
    "tail_merge_unscaled": ("    const float scale = exp2f(own - top);\n",
                            "    const float scale = 1.f;\n"),
}


SCRIPT = "tests/hopper_emu/transform.py"


def transform(src, wr, wg, name):
    src = plant(src, PLANTS, name, "hopper.cu", SCRIPT)
    expect("// PTX wrappers." in src and "// Two floats rounded" in src,
           "the mma.sync PTX wrapper section moved: update tests/hopper_emu/transform.py")
    a = src.index("// PTX wrappers.")
    b = src.index("// Two floats rounded")
    src = src[:a] + wr + src[b:]
    wgmma = ("// ---------------------------------------------------------------------------\n"
             "// PTX wrappers of the WGMMA kernel")
    end = "#endif  // __CUDA_ARCH_FEAT_SM90_ALL"
    expect(wgmma in src and end in src[src.find(wgmma):],
           "the WGMMA PTX wrapper section moved: update tests/hopper_emu/transform.py")
    a = src.index(wgmma)
    b = src.index(end, a) + len(end)
    src = src[:a] + wg + src[b:]
    ex2 = '  asm("ex2.approx.ftz.f32 %0, %1;\\n" : "=f"(y) : "f"(x));'
    expect(ex2 in src, "the exponential's inline asm changed: update tests/hopper_emu/transform.py")
    src = src.replace(ex2, "  y = exp2f(x);")
    # The epilogue's MUFU reciprocal and log2 (KSEEK_FA_FAST_EPILOGUE).
    for asm, c in (('  asm("rcp.approx.ftz.f32 %0, %1;\\n" : "=f"(inv) : "f"(total));',
                    "  inv = 1.f / total;"),
                   ('  asm("lg2.approx.ftz.f32 %0, %1;\\n" : "=f"(lg) : "f"(total));',
                    "  lg = log2f(total);")):
        expect(asm in src, "the epilogue's inline asm changed: update tests/hopper_emu/transform.py")
        src = src.replace(asm, c)
    src = src.replace("extern __shared__ __align__(128) unsigned char smem[];",
                      "unsigned char* smem = emu::g_block->smem.data();")
    return host_side(src, 3, SCRIPT)


if __name__ == "__main__":
    main(sys.argv, 3, transform, PLANTS)
