#!/usr/bin/env bash
# One device call (about 170 s): the mask's test against the row's limit
# less the lane's first key (KSEEK_FA_MASK_RELATIVE, new, default 0; the
# SASS after v3y: head_dim 128's masked loop has 31 VIADD per key tile,
# FA3's 4), on the 112 causal scenarios but decode, 8 samples:
#   def      the default (0: the key's index per score)
#   m1       KSEEK_FA_MASK_RELATIVE=1 (the WGMMA kernels)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/mask_relative.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-150}"
run_plan "def=$cu;m1=$cu -DKSEEK_FA_MASK_RELATIVE=1;def2=$cu" '[!dm]*causal*'
