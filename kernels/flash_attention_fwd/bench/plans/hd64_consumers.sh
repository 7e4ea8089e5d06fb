#!/usr/bin/env bash
# One device call (about 250 s from cold; carry .anchors): head_dim 64's
# three consumers (192-row items) where they pad the queries, since
# item_costs.sh ran a 256-query shape on two 192-row items per head (384
# rows for 256) at 0.8x cuDNN and the grid's s512 and s1024 compute 11%
# more rows on them than on 128-row items; ThreeConsumers' rule was last
# measured in v3. On every head_dim 64 scenario but decode and
# many-short, then item_costs.py on the same builds (256 queries, as
# item_costs.sh):
#   def      the default (three consumers with items for two waves)
#   c2       KSEEK_FA_HD64_CONSUMERS=2 (always two)
#   p5       KSEEK_FA_HD64_THREE_PAD_PCT=5 (three only where 192-row items
#            pad at most 5% more: not s512, s1024, 256 queries)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd64_consumers.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_ITEM_COSTS=256,512,1024,2048
export FA_ITEM_COSTS_ARGS="--head-dims 64 --samples 20"
run_plan "def=$cu;c2=$cu -DKSEEK_FA_HD64_CONSUMERS=2;p5=$cu -DKSEEK_FA_HD64_THREE_PAD_PCT=5" '[!dm]*hd64*'
