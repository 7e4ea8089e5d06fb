#!/usr/bin/env bash
# One device call (about 150 s): the one-Q-buffer kernels' item start and
# two switches measured long ago at head_dim 256, on the non-decode
# head_dim 256 and 192 scenarios and head_dim 128's grid shapes on one Q
# buffer (causal, and non-causal from 8192 keys):
#   kf    the item's first K tile loaded before its Q (KSEEK_FA_K_FIRST=14,
#         new; FA3's order): the K stage frees at the previous item's
#         second-to-last S, the Q buffer only at its last
#   qpc6  each consumer's 64 rows of Q with their own barriers at 256 and
#         192 too (KSEEK_FA_Q_PER_CONSUMER=6; v3c: -1 to -3%, the producer
#         spilling)
#   kfqpc both
#   bn64  64-key tiles at 256 (KSEEK_FA_HD256_BLOCK_N=64): s512 in 8 whole
#         tiles instead of 7 of 80 keys, the last one 32 keys
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd256_switches.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
kf="-DKSEEK_FA_K_FIRST=14"
qpc="-DKSEEK_FA_Q_PER_CONSUMER=6"
run_plan "def=$cu;kf=$cu $kf;qpc6=$cu $qpc;kfqpc=$cu $kf $qpc;bn64=$cu -DKSEEK_FA_HD256_BLOCK_N=64" \
  '[!d]*hd256*' '[!d]*hd192*' 'grid_hd128_causal*' 'grid_hd128_full_s8192*' 'grid_hd128_full_s16384*'
