#!/usr/bin/env bash
# One device call (about 200 s): FA3's scheduling choices as switches of
# hopper.cu, beside the default build on the 72 grid scenarios plus the
# head_dim 192 ones of the dims class: no ping-pong turns above head_dim
# 128 (KSEEK_FA_PINGPONG=3), O rescaled before the P V at head_dim 192 and
# 256 (KSEEK_FA_RESCALE_UNDER_S=3), both, and the item's first S outside
# the turns (KSEEK_FA_FIRST_S_TURN=0). NOTES.md v3j, "Device plan".
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/fa3_schedule.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "a=$cu;nopp=$cu -DKSEEK_FA_PINGPONG=3;rs3=$cu -DKSEEK_FA_RESCALE_UNDER_S=3;nopp_rs3=$cu -DKSEEK_FA_PINGPONG=3 -DKSEEK_FA_RESCALE_UNDER_S=3;first0=$cu -DKSEEK_FA_FIRST_S_TURN=0" \
  'grid_*' 'dims_hd192*'
