#!/usr/bin/env bash
# One device call (about 330 s from cold; carry .anchors and .device): the
# WGMMA kernel in clusters of two blocks with K/V TMA multicast
# (KSEEK_FA_CLUSTER, new; FA3's configuration for head_dim 128 and up
# without causal masking) against the default, on every non-causal head_dim
# 128 and 256 scenario but decode (the cluster takes those with an even
# number of 128-row query tiles; the others are the control), then
# power.py's sustained TFLOP/s, SM clock and energy per FLOP beside FA3 on
# the two grid shapes furthest under FA3:
#   def   the default
#   cl    clusters at head_dim 128 and 256 (KSEEK_FA_CLUSTER=6)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_POWER=grid_hd128_full_s1024_bf16,grid_hd256_full_s512_bf16
run_plan "def=$cu;cl=$cu -DKSEEK_FA_CLUSTER=6" '[!d]*hd128_full*' '[!d]*hd256_full*'
