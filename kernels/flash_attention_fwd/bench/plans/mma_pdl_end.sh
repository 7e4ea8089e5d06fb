#!/usr/bin/env bash
# One device call (about 150 s; carry .anchors): after timeline_decode.sh
# (the combine behind the decode kernel at head_dim 256 a plain launch,
# 2.2 us after it; FA3's -0.1 us), KSEEK_FA_MMA_PDL_END: the combine behind
# the mma.sync and decode kernels a programmatic dependent that they never
# let launch early, on the decode and qlong scenarios:
#   def      the default
#   mend4    KSEEK_FA_MMA_PDL_END=4 (head_dim 256)
#   mend7    KSEEK_FA_MMA_PDL_END=7 (every head dim)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/mma_pdl_end.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;mend4=$cu -DKSEEK_FA_MMA_PDL_END=4;mend7=$cu -DKSEEK_FA_MMA_PDL_END=7" \
  'decode_*' 'qlong_*'
