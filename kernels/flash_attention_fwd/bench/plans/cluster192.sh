#!/usr/bin/env bash
# One device call (about 200 s from cold): clusters of two blocks on the
# D = 192 kernel too (head_dim 136-192; its three 64-column blocks split
# 2 + 1 between the ranks), against the default (clusters at head_dim 128
# and on D = 256, KSEEK_FA_CLUSTER=6), on the non-causal head_dim 160 and
# 192 scenarios but decode, with head_dim 128 s1024-4096 and 256 s512-1024
# as the control (the same build there):
#   def    the default
#   cl14   and on the D = 192 kernel (KSEEK_FA_CLUSTER=14)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster192.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;cl14=$cu -DKSEEK_FA_CLUSTER=14" '[!d]*hd160_full*' '[!d]*hd192_full*' \
  'grid_hd128_full_s1024*' 'grid_hd128_full_s4096*' 'grid_hd256_full_s512*' 'grid_hd256_full_s1024*'
