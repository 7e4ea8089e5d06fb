#!/usr/bin/env bash
# One device call (about 200 s from cold): an item's key tiles walked from
# the end (KSEEK_FA_KEYS_FROM_END=14, written and emulated, never timed:
# the masked tiles first, the partial one in the peeled first tile, so
# that without causal masking the loop has no masked step) against the
# default, where keys are not a multiple of the tile (ragged, the 176-key
# head_dim 128 tiles at s8192-16384, prefill) and under causal masking
# (the diagonal tiles first):
#   def   the default
#   fe14  from the end at head_dim 128, 256 and on the D = 192 kernel
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/keys_from_end.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;fe14=$cu -DKSEEK_FA_KEYS_FROM_END=14" 'ragged*' 'grid_hd128_*_s8192*' \
  'grid_hd128_*_s16384*' 'grid_hd256_causal*' 'grid_hd128_causal*' 'prefill*hd128*' 'prefill*hd256*'
