#!/usr/bin/env bash
# One device call (about 90 s): the decode kernel's two row tiles per warp
# for row groups of 17-32 rows (KSEEK_FA_DECODE_TWO_TILES) by head dim,
# on the decode scenarios:
#   t1  the default build (head_dim 64)
#   t0  none (16-row blocks, two per such group)
#   t3  head_dim 64 and 128
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_tiles.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-300}"
run_plan "t1=$cu;t0=$cu -DKSEEK_FA_DECODE_TWO_TILES=0;t3=$cu -DKSEEK_FA_DECODE_TWO_TILES=3" \
  'decode_*'
