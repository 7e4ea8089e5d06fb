#!/usr/bin/env bash
# One device call (about 200 s): the decode switches of v3k (NOTES.md v3k,
# "Next (after v3k)") beside the default build: the mma.sync kernels' key
# splits at the best wave efficiency instead of the fewest splits within
# 85% of it, and 32-row decode blocks:
#   lk  the decode kernel's long splits (GQA decode, one block per SM)
#       only: decode_b16_k4096_gqa16_hd128 7 -> 8 splits (112 -> 128
#       blocks), decode_b4_k16384_gqa4_hd128 the same
#   sk  every mma.sync and decode split
#   rt  the decode kernel with two row tiles per warp for row groups of
#       17-32 rows (decode_q4_k16000_*_gqa8_causal: one 32-row block per
#       group and split instead of two 16-row ones reading the same K/V)
#   rtlk rt and lk
# on the decode, many-short and prefill scenarios (the shapes that reach
# the mma.sync kernels).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_splits.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
lk="-DKSEEK_FA_LONG_SPLIT_KEEP_PCT=100"
rt="-DKSEEK_FA_DECODE_TWO_TILES=3"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "a=$cu;lk=$cu $lk;sk=$cu -DKSEEK_FA_SPLIT_KEEP_PCT=100 $lk;rt=$cu $rt;rtlk=$cu $rt $lk" \
  'decode_*' 'many_short_*' 'prefill_*'
