#!/usr/bin/env bash
# One device call (about 150 s): with the lazy rescale (v3l) O's rescale
# no longer weighs per tile, which 176-key tiles amortised; so whether two
# Q buffers on 128-key tiles now pay at more keys, beside the default:
#   v3l    the default build (two Q buffers up to 4096 keys non-causal,
#          512 causal)
#   q8k    non-causal up to 8192 keys
#   q16k   non-causal up to 16384 keys
#   c2k    causal up to 2048 keys
# on the head_dim 128 grid, long, heads1, GQA/MQA and ragged scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_lazy.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "v3l=$cu;q8k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=8192;q16k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=16384;c2k=$cu -DKSEEK_FA_HD128_CAUSAL_Q2_UPTO=2048" \
  'grid_hd128_*' 'long_*hd128*' 'heads1_*' 'gqa*hd128*' 'mqa*hd128*' 'ragged_*hd128*'
