#!/usr/bin/env bash
# One device call (about 150 s warm): the combine behind the WGMMA kernels
# with four splits' loads in flight per warp from a number of splits
# (KSEEK_FA_WGMMA_COMBINE_FOUR_MIN_SPLITS; the timeline after v3w showed
# our combine at 6.3-6.7 us behind 8 splits of head_dim 256, FA3's 5.4):
#   def      the default (one in flight)
#   four3    from 3 splits
#   four6    from 6 splits
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/combine_four.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'prefill_q256_k16384_hd256_full_bf16' 'prefill_q333_k4097_hd256_full_bf16' \
  'prefill_q256_k16384_hd128_full_bf16' 'prefill_q512_k16384_hd192_causal_bf16'
run_plan "def=$cu;four3=$cu -DKSEEK_FA_WGMMA_COMBINE_FOUR_MIN_SPLITS=3;four6=$cu -DKSEEK_FA_WGMMA_COMBINE_FOUR_MIN_SPLITS=6;def2=$cu" \
  'prefill_*' 'qlong_*' 'decode_q4_*' 'heads1_*' 'long_*'
