#!/usr/bin/env bash
# One device call (about 200 s from cold): the consumers' turns at
# head_dim 64 (three consumers on most shapes, where the causal grid from
# s2048 and ragged_s3001 causal are 0.97-0.98x FA3 in v3s's final run), on
# every head_dim 64 WGMMA scenario but decode and many-short:
#   def      the default (v3s: turns at every head_dim, the item's first S
#            in a turn too)
#   fst6     KSEEK_FA_FIRST_S_TURN=6 (an item's first S issued outside the
#            turns at 64, as FA3 does)
#   pp6      KSEEK_FA_PINGPONG=6 (no turns at 64: each consumer issues its
#            GEMMs as soon as its operands are in)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd64_turns.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;fst6=$cu -DKSEEK_FA_FIRST_S_TURN=6;pp6=$cu -DKSEEK_FA_PINGPONG=6;def2=$cu" \
  '[!dm]*hd64*'
