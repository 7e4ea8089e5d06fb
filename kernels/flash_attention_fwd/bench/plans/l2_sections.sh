#!/usr/bin/env bash
# One device call (about 300 s from cold): the size of the WGMMA kernel's
# L2 sections, the (batch, head) pairs whose items run before the next
# pairs' (KSEEK_FA_WGMMA_L2_SECTION_MB, default 16 MB of K/V; FA3 groups
# heads by 32 MB). At grid_hd128_causal_s16384 (0.976-0.987x FA3 in v3t's
# final run) a section is 2 heads of 8 MB; FA3's would be 4. On the 208
# WGMMA scenarios of the grid, GQA, ragged, prefill, qlong, long and
# heads1 classes:
#   def      the default (v3t)
#   s32      KSEEK_FA_WGMMA_L2_SECTION_MB=32
#   s24      KSEEK_FA_WGMMA_L2_SECTION_MB=24
#   s8       KSEEK_FA_WGMMA_L2_SECTION_MB=8
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/l2_sections.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
s="$cu -DKSEEK_FA_WGMMA_L2_SECTION_MB"
run_plan "def=$cu;s32=$s=32;s24=$s=24;s8=$s=8;def2=$cu" '[!dm]*'
