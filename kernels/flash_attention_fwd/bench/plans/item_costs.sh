#!/usr/bin/env bash
# One device call (about 150 s from cold; carry .anchors): an item's fixed
# cost and its cost per 128 keys at the boost clock (item_costs.py), ours
# beside FA3 (num_splits 1) and cuDNN, on 2,048 items of 128 query rows
# (batch 64, 16 heads, 256 queries: even query tiles, so clustered at 128
# and 256) with 256-1152 keys (128-key tiles at head_dim 128: 2-9 per
# item; no 160-key ones), non-causal bf16, at head_dim 64, 128 and 256,
# since FA3's lead at grid hd128 s512-s2048 is cycles at that clock
# (clocks.sh):
#   def      the default
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/item_costs.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export FA_ITEM_COSTS=256,384,512,896,1024,1152
export FA_ITEM_COSTS_ARGS="--head-dims 128,64,256 --samples 30"
export FA_VARIANTS="def=$cu" FA_SCENARIOS=none
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
