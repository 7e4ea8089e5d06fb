#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): D = 192's
# tail shares as a grid of their own, the head dim's bit alone
# (KSEEK_FA_TAIL_LAUNCHES=8), the second measurement the session after
# v4g asked for (its tl14, every head dim's shares in two grids, was
# +1.1% at dims_hd192_full_s16384 against the default, one row).
#   def  the default (v4h: no shares at D = 192)
#   s14  -DKSEEK_FA_TAIL_SPLIT=14 (D = 192's shares in one grid: v4e and
#        v4g measured it 2.3-5% slower there)
#   l8   s14 with -DKSEEK_FA_TAIL_LAUNCHES=8 (those shares in a second
#        grid; head_dim 128 and 256 as def)
# Every non-causal scenario on the D = 192 kernel (head_dim 136-192) that
# is long enough for shares, more samples than run_plan's default.
# Prediction: l8 +1% against def at dims_hd192 and hd160 s16384, within
# 0.5% elsewhere (rows that take no shares run def's code); s14 -2 to -5%.
# l8 is kept only if it gains on both s16384 rows and loses nowhere.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/d192_two_grids.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
s14="$cu -DKSEEK_FA_TAIL_SPLIT=14"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 20 --budget-s 0.3}"
run_plan "def=$cu;s14=$s14;l8=$s14 -DKSEEK_FA_TAIL_LAUNCHES=8" \
  'dims_hd1[69]*_full_s4096_bf16' 'dims_hd1[69]*_full_s16384_bf16' \
  'gqa4_hd1[69]*_full_s2048_bf16' 'ragged_s3001_hd192_full_*'
