#!/usr/bin/env bash
# One device call (about 200 s from cold; carry .anchors): switches tuned
# before the clusters, again on the clustered kernels where the grid
# trails FA3 (head_dim 128 non-causal s512-s4096, the two-Q-buffer
# kernel; head_dim 256 s512-s1024), against the default:
#   def    the default
#   pp5    no ping-pong turns at head_dim 128 (KSEEK_FA_PINGPONG=5)
#   fst5   the first S without a turn at 128 (KSEEK_FA_FIRST_S_TURN=5)
#   qpc0   one Q barrier per buffer, not per consumer (KSEEK_FA_Q_PER_CONSUMER=0)
#   l2p2   L2 promotion of 128 bytes, not 256 (KSEEK_FA_L2_PROMOTION=2)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster_switches.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;pp5=$cu -DKSEEK_FA_PINGPONG=5;fst5=$cu -DKSEEK_FA_FIRST_S_TURN=5;qpc0=$cu -DKSEEK_FA_Q_PER_CONSUMER=0;l2p2=$cu -DKSEEK_FA_L2_PROMOTION=2" \
  'grid_hd128_full_s512*' 'grid_hd128_full_s1024*' 'grid_hd128_full_s2048*' 'grid_hd128_full_s4096*' \
  'gqa*_hd128_full_s2048_bf16' 'grid_hd256_full_s512*' 'grid_hd256_full_s1024*'
