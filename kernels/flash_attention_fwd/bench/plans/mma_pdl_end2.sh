#!/usr/bin/env bash
# One device call (about 200 s): KSEEK_FA_MMA_PDL_END=7 again (mma_pdl_end.sh
# measured 1.014x on decode and qlong, GQA decode at head_dim 128 +4-8%,
# but equal builds moved up to 8% on single decode shapes), on the 48
# decode scenarios with decode_plan's 10 samples:
#   def      the default
#   mend7    KSEEK_FA_MMA_PDL_END=7
#   def2     the default again
#   mend7b   KSEEK_FA_MMA_PDL_END=7 again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/mma_pdl_end2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
decode_plan "def=$cu;mend7=$cu -DKSEEK_FA_MMA_PDL_END=7;def2=$cu;mend7b=$cu -DKSEEK_FA_MMA_PDL_END=7"
