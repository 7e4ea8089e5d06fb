#!/usr/bin/env bash
# One device call (about 300 s from cold; carry .anchors): the clusters of
# two blocks (KSEEK_FA_CLUSTER=6) with the remote release that cluster2.sh
# found (no MEMBAR.ALL.GPU per release) and on head_dim 128's 128-key
# two-Q-buffer kernel too (seqlen_k up to 4096 where 144-key tiles pad
# more), against the default on every non-causal head_dim 128 and 256
# scenario but decode, then power.py beside FA3 on the grid shapes
# furthest under FA3 and head_dim 128 s16384:
#   def   the default
#   cl    clusters at head_dim 128 and 256 (KSEEK_FA_CLUSTER=6)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster3.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_POWER=grid_hd128_full_s1024_bf16,grid_hd256_full_s512_bf16,grid_hd128_full_s16384_bf16
export FA_POWER_ARGS="--seconds 2"
run_plan "def=$cu;cl=$cu -DKSEEK_FA_CLUSTER=6" '[!d]*hd128_full*' '[!d]*hd256_full*'
