#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): v4j beside
# KSEEK_FA_SC_K_GLOBAL=1 (the sum check's S again reading K from global
# memory, one 8-key block's loads at a time, so K is released right after
# S as before v4j) on sum_check2.sh's 120 rows and grid_hd64_full_s512_f16.
# On its 17 rows sum_check3.sh found the unsafe form (ek: K released after
# S, S again from a stage the producer may refill) 1.016x v4j, and the
# first safe form (all of a tile's loads at once: ptxas spilled in 44
# key-tile loops) 0.988x.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check4.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu;kg=$cu -DKSEEK_FA_SC_K_GLOBAL=1" \
  'grid_*_bf16' 'grid_hd64_full_s512_f16' 'long_*' 'many_short_b512_s32_hd64*' 'many_short_*hd128*' \
  'gqa*_hd64_*_bf16' 'gqa*_hd128_*_bf16' 'ragged_*_hd128_*_bf16' 'ragged_*_hd64_*_bf16' \
  'prefill_*hd64*' 'prefill_*hd128*' 'dims_*hd96*' 'dims_*hd80*' 'qlong_*'
