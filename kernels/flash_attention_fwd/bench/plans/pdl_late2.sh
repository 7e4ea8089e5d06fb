#!/usr/bin/env bash
# One device call (about 170 s): after pdl_late.sh (late15 gained 1-2.7%
# at head_dim 128 split-key prefill and 2% on the D = 192 kernel, lost
# 1-5% at head_dim 64), the late dependent launch at head_dim 128 and the
# D = 192 kernel only, on the split-key shapes:
#   def      the default
#   late10   KSEEK_FA_PDL_LATE=10
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl_late2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;late10=$cu -DKSEEK_FA_PDL_LATE=10;def2=$cu" \
  'prefill_*' 'qlong_*' 'decode_q4_*' 'heads1_*' 'long_*'
