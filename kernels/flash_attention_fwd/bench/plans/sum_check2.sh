#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): the softmax
# without maxima (KSEEK_FA_SUM_CHECK=3: head_dim 64 and 128 with the narrow
# 80/96, on 128-key tiles and wider) as written, with its slow path (S
# again by mma.sync where a warp's test fails), against the default on
# 120 scenarios: the grid in bf16, long, GQA, ragged, prefill, the narrow
# dims, qlong, and the many-short rows (short-key tiles, which it leaves
# alone: they are the control, as are head_dim 256 and 192).
#   def  the default
#   sc   -DKSEEK_FA_SUM_CHECK=3
# Prediction (sum_check.sh's upper bound, an H100): head_dim 64 +3-6% from
# s2048 on, 128 +1-2% (causal s8192 +4%), s512 flat, 256 unchanged.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu;sc=$cu -DKSEEK_FA_SUM_CHECK=3" \
  'grid_*_bf16' 'long_*' 'many_short_b512_s32_hd64*' 'many_short_*hd128*' \
  'gqa*_hd64_*_bf16' 'gqa*_hd128_*_bf16' 'ragged_*_hd128_*_bf16' 'ragged_*_hd64_*_bf16' \
  'prefill_*hd64*' 'prefill_*hd128*' 'dims_*hd96*' 'dims_*hd80*' 'qlong_*'
