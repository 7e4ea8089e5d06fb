#!/usr/bin/env bash
# One device call (about 200 s from cold): the decode kernel's 17-32-row
# blocks with their warps in pairs (KSEEK_FA_DECODE_PAIRS: a K/V ring per
# pair, one warp loading K and the other V, one row tile per warp), where
# four warps with two row tiles each lost to version 1 at head_dim 128
# (v3q: t3m2 76.4 against 79.0 TFLOP/s on decode_q4_k16000_hd128_gqa8),
# on the 48 decode scenarios:
#   def      the default (32-row GQA groups at 128 on version 1)
#   t3m2     two row tiles per warp at 64 and 128, GQA groups of 17-32 rows
#            on the decode kernel from two splits of version 1 (v3q's)
#   p3t3m2   the same with the warps in pairs at 64 and 128
#   p2t3m2   pairs at 128 only
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_pairs.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
t3m2="$cu -DKSEEK_FA_DECODE_TWO_TILES=3 -DKSEEK_FA_DECODE2_GQA_MIN_SPLITS=2"
decode_plan "def=$cu;t3m2=$t3m2;p3t3m2=$t3m2 -DKSEEK_FA_DECODE_PAIRS=3;p2t3m2=$t3m2 -DKSEEK_FA_DECODE_PAIRS=2"
