#!/usr/bin/env bash
# One device call (about 200 s): the combine after split keys as a
# programmatic dependent behind the D = 256 WGMMA kernel again. v3m
# measured it at the blocks' start 4-5% slower on prefill_q256_k16384_hd256
# (0.93-0.98x FA3 since, the lowest non-decode shape of v3u's run), so
# D = 256 launches it plainly (KSEEK_FA_PDL=11). KSEEK_FA_PDL_LATE (new):
# the dependent launch allowed only once a block's producer finds the
# queue empty. On the prefill shapes and head_dim 256's WGMMA scenarios:
#   def      the default (PDL 11)
#   p15      KSEEK_FA_PDL=15 (D = 256 too, at the start, as v3m)
#   late4    KSEEK_FA_PDL=15 KSEEK_FA_PDL_LATE=4 (D = 256 late)
#   late15   KSEEK_FA_PDL=15 KSEEK_FA_PDL_LATE=15 (every WGMMA kernel late)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl_late.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
p="$cu -DKSEEK_FA_PDL=15 -DKSEEK_FA_PDL_END=0"  # PDL_END=0: as before v3x
run_plan "def=$cu;p15=$p;late4=$p -DKSEEK_FA_PDL_LATE=4;late15=$p -DKSEEK_FA_PDL_LATE=15;def2=$cu" \
  'prefill_*' 'grid_hd256_*' 'qlong_*hd256*' 'decode_q4_*'
