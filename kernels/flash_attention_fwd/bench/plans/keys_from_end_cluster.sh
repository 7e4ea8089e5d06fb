#!/usr/bin/env bash
# One device call (about 200 s from cold; carry .anchors): the key tiles
# walked from the end in the clustered D = 192 and D = 256 kernels too
# (v3p has it in head_dim 128's only), where their tiles (80 keys at 256,
# 112 at 192) leave a partial last tile at every grid length, on every
# non-causal head_dim 160-256 scenario but decode and head_dim 128
# s512-s1024:
#   def    the default
#   fec14  KSEEK_FA_KEYS_FROM_END_CLUSTER=14
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/keys_from_end_cluster.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;fec14=$cu -DKSEEK_FA_KEYS_FROM_END_CLUSTER=14" \
  '[!d]*hd256_full*' '[!d]*hd192_full*' '[!d]*hd160_full*' 'grid_hd128_full_s512*' 'grid_hd128_full_s1024*'
