#!/usr/bin/env bash
# One device call (about 250 s from cold): the WGMMA producer's atomic for
# its next item issued before the wait for the item's last V stage
# (KSEEK_FA_EARLY_NEXT=1), so that its round trip overlaps that wait
# instead of delaying the next item's Q. Clustered items take a static
# order and do not change. On the 208 WGMMA scenarios:
#   def      the default (v3t)
#   en       KSEEK_FA_EARLY_NEXT=1
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/early_next.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;en=$cu -DKSEEK_FA_EARLY_NEXT=1;def2=$cu" '[!dm]*'
