#!/usr/bin/env bash
# One device call (about 400 s from cold; carry .anchors): K/V evict-last
# in the cluster instances only (KSEEK_FA_TMA_CACHE_HINT_CLUSTER; v3p's
# hint2 measured it everywhere: +0.3-1.1% at hd128 s512-s1024, -0.3% at
# s4096, -0.5% gqa s2048), on every non-causal head_dim 128-256 scenario
# but decode and many-short (no clusters):
#   def      the default
#   hc2      KSEEK_FA_TMA_CACHE_HINT_CLUSTER=2 (head_dim 128's clusters)
#   hc2u2k   the same up to 2048 keys (KSEEK_FA_TMA_CACHE_HINT_CLUSTER_UPTO,
#            removed after this call measured it 0.996x: now the same as hc2)
#   hc14     KSEEK_FA_TMA_CACHE_HINT_CLUSTER=14 (every clustered kernel)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster_hint.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;hc2=$cu -DKSEEK_FA_TMA_CACHE_HINT_CLUSTER=2;hc2u2k=$cu -DKSEEK_FA_TMA_CACHE_HINT_CLUSTER=2 -DKSEEK_FA_TMA_CACHE_HINT_CLUSTER_UPTO=2048;hc14=$cu -DKSEEK_FA_TMA_CACHE_HINT_CLUSTER=14" \
  '[!dm]*hd128_full*' '[!dm]*hd256_full*' '[!dm]*hd192_full*' '[!dm]*hd160_full*'
