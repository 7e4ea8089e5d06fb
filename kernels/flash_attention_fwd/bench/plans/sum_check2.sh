#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): the softmax
# without maxima (KSEEK_FA_SUM_CHECK=3: head_dim 64 and 128 with the narrow
# 80/96, on 128-key tiles and wider) as written, with its slow path (S
# again by mma.sync where a warp's test fails), against the default on
# 120 scenarios: the grid in bf16, long, GQA, ragged, prefill, the narrow
# dims, qlong, and the many-short rows (short-key tiles, which it leaves
# alone: they are the control, as are head_dim 256 and 192).
#   def  v4i (-DKSEEK_FA_SUM_CHECK=0; the default when it ran, v4j has 3)
#   sc   -DKSEEK_FA_SUM_CHECK=3
# Prediction (sum_check.sh's upper bound, an H100): head_dim 64 +3-6% from
# s2048 on, 128 +1-2% (causal s8192 +4%), s512 flat, 256 unchanged.
# Measured (bench/results/sum_check_h100.txt): call 2 ran a first version
# whose every failed test took S again (the causal 176-key head_dim 128
# rows lost 10-33%); call 3 the committed one (RebaseScores): sc 1.014x
# def over the 120 rows, head_dim 64 1.035x, 80/96 1.02x, 128 1.002x.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu -DKSEEK_FA_SUM_CHECK=0;sc=$cu -DKSEEK_FA_SUM_CHECK=3" \
  'grid_*_bf16' 'long_*' 'many_short_b512_s32_hd64*' 'many_short_*hd128*' \
  'gqa*_hd64_*_bf16' 'gqa*_hd128_*_bf16' 'ragged_*_hd128_*_bf16' 'ragged_*_hd64_*_bf16' \
  'prefill_*hd64*' 'prefill_*hd128*' 'dims_*hd96*' 'dims_*hd80*' 'qlong_*'
