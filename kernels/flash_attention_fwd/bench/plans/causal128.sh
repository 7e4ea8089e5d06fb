#!/usr/bin/env bash
# One device call (about 270 s from cold; carry .anchors): head_dim 128
# with causal masking, 0.98x FA3 from s2048 in v3r's final run (s512
# 1.08x), on every causal head_dim 128 scenario but decode, then
# item_costs.py on the same builds at head_dim 64 with 256 queries (the
# shape KSEEK_FA_HD64_THREE_PAD_PCT's default moves to two consumers):
#   def      the default (v3r with the 25% padding rule at head_dim 64)
#   p100     KSEEK_FA_HD64_THREE_PAD_PCT=100 (three consumers at any
#            padding, as v3r's final run; the causal table's builds are
#            equal to def: their spread)
#   cq       KSEEK_FA_HD128_CAUSAL_Q2_UPTO=16384 (two Q buffers and two
#            stages for every causal item, not only up to 512 keys)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal128.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_ITEM_COSTS=256,512,1024,2048
export FA_ITEM_COSTS_ARGS="--head-dims 64 --samples 20"
run_plan "def=$cu;p100=$cu -DKSEEK_FA_HD64_THREE_PAD_PCT=100;cq=$cu -DKSEEK_FA_HD128_CAUSAL_Q2_UPTO=16384" \
  '[!dm]*hd128*causal*'
