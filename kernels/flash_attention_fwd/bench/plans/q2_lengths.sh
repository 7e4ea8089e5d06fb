#!/usr/bin/env bash
# One device call (about 100 s): how far up the keys 2 Q buffers with
# 128-key tiles beat the 176-key tiles at head_dim 128 without causal
# masking, with v3k's TMA stores (KSEEK_FA_HD128_FULL_Q2_UPTO: default
# 2048; v3k_defaults.sh measured 4096 +1% at s4096):
#   v3k   the default build     q4k   up to 4096
#   q8k   up to 8192            q16k  up to 16384
# on the non-causal head_dim 128 grid, GQA/MQA and long scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_lengths.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
q="-DKSEEK_FA_HD128_FULL_Q2_UPTO"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.15}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "v3k=$cu;q4k=$cu $q=4096;q8k=$cu $q=8192;q16k=$cu $q=16384" \
  'grid_*hd128*_full*' 'gqa*hd128*_full*' 'mqa*hd128*_full*' 'long_*hd128*_full*' 'heads1_*hd128*_full*' 'prefill_*hd128*_full*'
