#!/usr/bin/env bash
# One device call (about 200 s): v3k's defaults (TMA stores, fast epilogue
# and locate at head_dim 64 and 128, 2 Q buffers at head_dim 128 with few
# keys, 2 K/V stages on the causal head_dim 128 kernel) beside v3j's file,
# and one more length rule:
#   v3j   v3j's hopper.cu (carry .variants: git show ef7c6dd:kernels/flash_attention_fwd/hopper.cu > .variants/hopper_v3j.cu)
#   v3k   the default build
#   q4k   2 Q buffers at head_dim 128 without causal masking up to 4096 keys
# on the epilogue plan's scenarios and the head_dim 256 many-short ones.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/v3k_defaults.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-500}"
run_plan "v3j=.variants/hopper_v3j.cu;v3k=$cu;q4k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=4096" \
  'grid_*' 'qlong_*hd128*' 'gqa*hd64*' 'gqa*hd128*' 'mqa*hd64*' 'mqa*hd128*' 'many_short_*' 'dims_hd80*' 'dims_hd96*'
