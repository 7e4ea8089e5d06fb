#!/usr/bin/env bash
# One device call (about 250 s from cold): the consumers' order of waits
# (KSEEK_FA_V_AFTER_S, WGMMA head-dim bits): a step's V waited for only
# after its S is issued, as FA3 orders its consumer_wait on V between the
# two GEMMs, or K and V tested together before the turn is taken. On the
# WGMMA shapes of the grid, GQA, ragged and heads1 classes (each runs one
# D, so the classes split the effect by head_dim), with the default twice
# (the spread of equal builds):
#   def      the default (since v3s: 3, V after S at head_dim 64 and 128)
#   v0       KSEEK_FA_V_AFTER_S=0 (v3r's order everywhere)
#   v15      KSEEK_FA_V_AFTER_S=15 (V after S at every WGMMA head_dim)
#   def2     the default again
# (v3s's call 3 ran it with the default then, 0, as def and def2, and 15.)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/v_after_s.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;v0=$cu -DKSEEK_FA_V_AFTER_S=0;v15=$cu -DKSEEK_FA_V_AFTER_S=15;def2=$cu" \
  'grid_*' 'gqa*' 'ragged*' 'heads1*'
