#!/usr/bin/env bash
# One device call (about 250 s from cold): only the first consumer waits on
# the K/V stages' full barriers inside the turns (KSEEK_FA_WAIT_FIRST_ONLY;
# FA3's consumers other than the first follow its scheduler barrier the
# same way), on the 208 WGMMA scenarios of the grid, GQA, ragged, prefill,
# qlong, long and heads1 classes:
#   def      the default (v3s)
#   wf1      at head_dim 64
#   wf3      at head_dim 64 and 128 (80/96 too)
#   wf15     at every head dim with turns (64, 128, 256, 192)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/wait_first.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
wf="$cu -DKSEEK_FA_WAIT_FIRST_ONLY"
run_plan "def=$cu;wf1=$wf=1;wf3=$wf=3;wf15=$wf=15;def2=$cu" '[!dm]*'
