#!/usr/bin/env bash
# One device call (about 150 s of wall time; no carry needed): the item
# trace (KSEEK_FA_TRACE, bench/item_trace.py) on the causal head_dim 128
# rows that trail FA3 (grid s2048-s16384: 0.972-0.996x on the H200,
# bench/results/hopper_v4c_h200.txt) beside the rows that lead it: the
# non-causal s16384 (1.036x; clusters, 176-key tiles) and head_dim 256's
# causal s16384 (1.018x). From the raw records (item_trace_raw.tgz): the
# loop's time against the item's key tiles (per tile, and what the masked
# diagonal tiles add), the producer's waits, and the call's tail (blocks
# idle while the last items run).
#   tr    hopper.cu with -DKSEEK_FA_TRACE=1 (the diagnostic build)
#   def   the default
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/trace_causal.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
item_trace_of tr \
  grid_hd128_causal_s16384_bf16,grid_hd128_causal_s4096_bf16,grid_hd128_causal_s2048_bf16,grid_hd128_full_s16384_bf16,grid_hd256_causal_s16384_bf16 \
  "--bins 10"
run_plan "tr=$cu -DKSEEK_FA_TRACE=1;def=$cu" \
  'grid_hd128_causal_s16384_bf16' 'grid_hd128_causal_s4096_bf16' 'grid_hd128_causal_s2048_bf16' \
  'grid_hd128_full_s16384_bf16' 'grid_hd256_causal_s16384_bf16'
