#!/usr/bin/env bash
# One device call (about 220 s): the combine after split keys launched as
# a programmatic dependent of the attention kernel (KSEEK_FA_PDL, now on
# by default) and four splits in flight / a block per row behind version 1
# (KSEEK_FA_MMA_COMBINE; Nsight Compute on decode_b16_k4096_gqa16_hd128 in
# v3l's session: version 1 15.2 us, then CombineSplits 7.3 us with one
# split's loads in flight), beside the previous launch:
#   v3l    KSEEK_FA_PDL=0 (a plain launch after the attention kernel)
#   pdl    the default (the programmatic dependent launch)
#   pdl1   and four splits in flight behind version 1
#   pdl3   and a block per row behind version 1 with 16 or more splits
# on the decode, qlong, many-short and prefill scenarios (split keys) and
# the grid's s512 shapes.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "v3l=$cu -DKSEEK_FA_PDL=0;pdl=$cu;pdl1=$cu -DKSEEK_FA_MMA_COMBINE=1;pdl3=$cu -DKSEEK_FA_MMA_COMBINE=3" \
  'decode_*' 'qlong_*' 'many_short_*' 'prefill_*' 'grid_*_s512_*'
