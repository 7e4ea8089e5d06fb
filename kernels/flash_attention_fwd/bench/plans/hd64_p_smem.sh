#!/usr/bin/env bash
# One device call (about 200 s from cold): head_dim 64's three-consumer
# items on 192-key tiles with P through shared memory
# (KSEEK_FA_HD64_P_SMEM), on every head_dim 64 WGMMA scenario but decode
# and many-short (58):
#   def      the default (v3s: 128-key tiles, P in registers, 4 stages)
#   ps1      KSEEK_FA_HD64_P_SMEM=1 (without causal masking where 192-key
#            tiles pad the keys by at most 5% more than 128-key ones)
#   ps2      KSEEK_FA_HD64_P_SMEM=2 (every three-consumer item, causal too)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd64_p_smem.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;ps1=$cu -DKSEEK_FA_HD64_P_SMEM=1;ps2=$cu -DKSEEK_FA_HD64_P_SMEM=2;def2=$cu" \
  '[!dm]*hd64*'
