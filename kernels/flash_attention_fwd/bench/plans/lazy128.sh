#!/usr/bin/env bash
# One device call (about 250 s from cold): head_dim 128 without the lazy
# rescale (KSEEK_FA_LAZY_RESCALE=12: O rescaled at every tile there), since
# tile_costs.sh measured it 0.8% fewer cycles per 128 keys on 256-query
# items (v3r's call 6), where v3l had the lazy rescale +0.3% at 128 before
# the TMA stores, clusters and two Q buffers; on every head_dim 128
# scenario but decode, with the default twice (the spread of equal builds):
#   def      the default
#   lz12     KSEEK_FA_LAZY_RESCALE=12
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/lazy128.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;lz12=$cu -DKSEEK_FA_LAZY_RESCALE=12;def2=$cu" '[!dm]*hd128*'
