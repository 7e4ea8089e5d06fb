#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): the wide key
# tiles (176 keys, one Q buffer) for head_dim 128 with causal masking where
# the mean item sees at least n keys (KSEEK_FA_HD128_CAUSAL_WIDE_KEYS), on
# the causal head_dim 128 scenarios with long items. The item trace
# (trace_causal.sh) timed the causal 128-key tiles at 1.41-1.44 us each and
# the non-causal clustered 176-key ones at 1.86 (per key 4% faster), but
# ragged_s4097's unclustered 176-key tiles at 1.95 (no faster per key than
# the causal ones): the clusters, not the width, may carry the 4% (v3o
# measured them at 0.995-1.007x on s8192-s16384, so probably not). nocl
# times the non-causal rows without clusters (KSEEK_FA_CLUSTER=12: off at
# head_dim 128 only). The diagonal pads about 88 more keys per
# item on 176-key tiles. Prediction: at most +2-3% where the mean item
# sees 8192 keys (grid s16384, prefill q2048 k16384, long s32768), +1% at
# 4096 (grid s8192, prefill q1000 k8192), even or worse at 2048 (grid
# s4096, ragged s4097, prefill q333 k4097); nothing if nocl loses the 4%.
# grid s2048 causal (mean 1024: every build but nocl the same) shows
# the noise, and the non-causal rows for the w builds too.
# Measured (v4d, an H100, the short mode): w8k +1.6-1.8% at grid s16384,
# w4k -0.5-0.9% at s8192; nocl -3.3 to -5.2% on the non-causal rows; hence
# the default 6144 (causal_wide_6k.sh). The builds name n explicitly, so
# the plan still compares with 128-key tiles (v4c):
#   v4c   KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=0 (128-key tiles with causal masking)
#   w8k   the wide tiles from 8192 keys per mean item
#   w4k   from 4096
#   w2k   from 2048
#   nocl  no clusters at head_dim 128 (and the default's wide causal tiles)
#   tr    w8k and nocl together in the trace build (KSEEK_FA_TRACE): then
#         item_trace.py on causal s16384 (176-key tiles, masked) and full
#         s16384 (176-key tiles, not clustered), each tile's time beside
#         trace_causal.sh's (128-key causal, 176-key clustered)
# CAUSAL_WIDE_SHORT=1: v4c, w8k, w4k and nocl only, without the trace
# (about 170 s, for a call with little device time left).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_wide.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
w="$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS"
builds="v4c=$w=0;w8k=$w=8192;w4k=$w=4096;nocl=$cu -DKSEEK_FA_CLUSTER=12"
if [[ ${CAUSAL_WIDE_SHORT:-0} != 1 ]]; then
  builds+=";w2k=$w=2048;tr=$w=8192 -DKSEEK_FA_CLUSTER=12 -DKSEEK_FA_TRACE=1"
  item_trace_of tr grid_hd128_causal_s16384_bf16,grid_hd128_full_s16384_bf16 "--bins 10"
fi
run_plan "$builds" \
  'grid_hd128_causal_s2048_*' 'grid_hd128_causal_s4096_*' 'grid_hd128_causal_s8192_*' \
  'grid_hd128_causal_s16384_*' 'ragged_s4097_hd128_causal_*' 'prefill_q333_k4097_hd128*causal*' \
  'prefill_q1000_k8192_hd128*causal*' 'prefill_q2048_k16384_hd128*causal*' 'long_single_s32768_h1_hd128_causal_*' \
  'grid_hd128_full_s4096_bf16' 'grid_hd128_full_s8192_bf16' 'grid_hd128_full_s16384_bf16'
