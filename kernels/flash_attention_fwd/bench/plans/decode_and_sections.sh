#!/usr/bin/env bash
# One device call (about 400 s): mma_pdl_end2.sh, combine_in_flight.sh and
# 8 MB L2 sections at head_dim 128 in one table, on the 48 decode
# scenarios and the 82 others of the D = 128 WGMMA kernel (head_dim 80, 96,
# 128), 10 samples each. Each switch leaves the other set's code as it is,
# so there each variant is one more equal build:
#   def      the default
#   mend7    KSEEK_FA_MMA_PDL_END=7 (mma_pdl_end.sh: 1.014x on decode and
#            qlong, with equal builds moving up to 8% on single shapes)
#   if16     KSEEK_FA_COMBINE_IN_FLIGHT=16 (16 splits' loads in flight per
#            warp in the combine behind the decode kernel)
#   s8       8 MB L2 sections at the D = 128 kernel, causal or not (l2_sections.sh's
#            8 MB gained 0.3% at head_dim 128 and lost at 256); run
#            2026-12-04 as a switch that became KSEEK_FA_FULL_L2_SECTION_DIMS
#            (non-causal only, default 2 since), so now the variant s16
#            (KSEEK_FA_FULL_L2_SECTION_DIMS=0, 16 MB everywhere) stands in
#            its place
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_and_sections.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
run_plan "def=$cu;mend7=$cu -DKSEEK_FA_MMA_PDL_END=7;if16=$cu -DKSEEK_FA_COMBINE_IN_FLIGHT=16;s16=$cu -DKSEEK_FA_FULL_L2_SECTION_DIMS=0;def2=$cu" \
  'decode_*' '[!dm]*hd128*' '[!dm]*hd80*' '[!dm]*hd96*'
