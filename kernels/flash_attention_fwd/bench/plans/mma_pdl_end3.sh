#!/usr/bin/env bash
# One device call (about 130 s warm): KSEEK_FA_MMA_PDL_END=7 away from
# decode (mma_pdl_end2.sh measured it on the 48 decode shapes): the qlong,
# many-short, heads1 and prefill scenarios (77), 10 samples:
#   def      the file as it is
#   mend7    KSEEK_FA_MMA_PDL_END=7
#   def2     the file again
#   mend7b   KSEEK_FA_MMA_PDL_END=7 again
# (Measured on an H100 when 0 was the default: mend7 0.999x, mend7b
# 1.001x, def2 1.002x; bench/results/hopper_after_v4a_variants_h100.txt.
# With 7 the default, def and mend7 are the same build.)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/mma_pdl_end3.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
run_plan "def=$cu;mend7=$cu -DKSEEK_FA_MMA_PDL_END=7;def2=$cu;mend7b=$cu -DKSEEK_FA_MMA_PDL_END=7" \
  'qlong*' 'many*' 'heads1*' 'prefill*'
