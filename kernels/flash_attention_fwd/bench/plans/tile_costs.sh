#!/usr/bin/env bash
# One device call (about 200 s from cold; FA3 only where .anchors is
# carried): what head_dim 128's per-tile overhead (about 1,100 cycles per
# 128-key tile over the tensor bound, item_costs.sh) is made of, as
# item_costs.py's cost per 128 keys and fixed cost per item on 2,048 items
# of 256 queries with 256-1152 keys (128-key tiles, two Q buffers,
# clustered):
#   def      the default
#   pp5      KSEEK_FA_PINGPONG=5 (no turn barrier at 128: each consumer
#            issues its GEMMs as soon as its operands are in)
#   lz12     KSEEK_FA_LAZY_RESCALE=12 (O rescaled at every tile at 128)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tile_costs.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export FA_ITEM_COSTS=256,384,512,1024,1152
export FA_ITEM_COSTS_ARGS="--head-dims 128 --samples 20"
export FA_VARIANTS="def=$cu;pp5=$cu -DKSEEK_FA_PINGPONG=5;lz12=$cu -DKSEEK_FA_LAZY_RESCALE=12" FA_SCENARIOS=none
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
