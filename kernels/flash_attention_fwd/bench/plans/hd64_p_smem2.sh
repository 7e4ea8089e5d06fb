#!/usr/bin/env bash
# One device call (about 150 s from cold): where KSEEK_FA_HD64_P_SMEM=1
# (192-key tiles, P through shared memory) loses 5% on the scenarios it
# applies to (hd64_p_smem.sh: grid hd64 full 0.945-0.948x def in two
# calls), on those scenarios (head_dim 64 without causal masking, 2048
# keys and more):
#   def        the default (v3s)
#   ps1        KSEEK_FA_HD64_P_SMEM=1
#   ps1_ru0    and O rescaled after the P V wait, not under the next S
#              (KSEEK_FA_RESCALE_UNDER_S=0)
#   ps1_va0    and V waited for with K before the turn
#              (KSEEK_FA_V_AFTER_S=2)
#   ps1_pp6    and no turns at head_dim 64 (KSEEK_FA_PINGPONG=6; each
#              consumer synchronises its warpgroup before P V on a barrier
#              of its own)
#   ps1_sm6    and one key-tile loop with the mask's test
#              (KSEEK_FA_SPLIT_MASK_LOOP=6: less code, maybe no spill)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd64_p_smem2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
ps="$cu -DKSEEK_FA_HD64_P_SMEM=1"
run_plan "def=$cu;ps1=$ps;ps1_ru0=$ps -DKSEEK_FA_RESCALE_UNDER_S=0;ps1_va0=$ps -DKSEEK_FA_V_AFTER_S=2;ps1_pp6=$ps -DKSEEK_FA_PINGPONG=6;ps1_sm6=$ps -DKSEEK_FA_SPLIT_MASK_LOOP=6" \
  'grid_hd64_full_s[2-9]*' 'grid_hd64_full_s1[6]*' '*hd64_full*2048*' 'prefill_q[12]*hd64_full*' \
  'ragged_s3001_hd64_full*'
