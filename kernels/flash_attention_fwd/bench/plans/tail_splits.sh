#!/usr/bin/env bash
# One device call (about 400 s from cold; carry .anchors): the tail's
# pieces (KSEEK_FA_TAIL_SPLITS: the last items of a launch without causal
# masking cut into key ranges, so the last round is not partly empty; the
# FA3 grid's 1024 pairs on 66 clusters take 16 rounds for 15.5 rounds of
# work) on every non-causal scenario but decode and many-short:
#   def      the default
#   t11      KSEEK_FA_TAIL_SPLITS=11 (head_dim 64, 128 and D = 192)
#   t11c8    the same with KSEEK_FA_TAIL_ITEM_COST=8 (an item's and a
#            piece's overhead two key tiles, not one: fewer plans taken)
#   def2     the default again: the spread between equal builds in one call
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tail_splits.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;t11=$cu -DKSEEK_FA_TAIL_SPLITS=11;t11c8=$cu -DKSEEK_FA_TAIL_SPLITS=11 -DKSEEK_FA_TAIL_ITEM_COST=8;def2=$cu" \
  '[!dm]*full*'
