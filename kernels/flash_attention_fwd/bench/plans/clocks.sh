#!/usr/bin/env bash
# One device call (about 200 s from cold; carry .anchors): the SM clock
# around each backend's call in the flushed, padded timing (clocks.py) on
# the grid's non-causal head_dim 128 shapes, where FA3 leads at s512-s2048
# in that timing while under ncu's fixed clock both take the same time
# (v3p), and on hd256 s512 and hd64 s1024 for comparison:
#   def      the default, beside FA3 (num_splits 1) and cuDNN
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/clocks.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
FA_CLOCKS=$(python3 kernels/flash_attention_fwd/bench/pick_scenarios.py \
  'grid_hd128_full_s*_bf16' 'grid_hd256_full_s512_bf16' 'grid_hd64_full_s1024_bf16') || exit 1
export FA_CLOCKS FA_CLOCKS_ARGS="--samples 30"
export FA_VARIANTS="def=$cu" FA_SCENARIOS=none
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
