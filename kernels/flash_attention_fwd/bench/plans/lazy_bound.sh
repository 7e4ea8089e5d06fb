#!/usr/bin/env bash
# One device call (about 200 s): the lazy rescale's test against a bound in
# raw score units (KSEEK_FA_LAZY_RAW_BOUND=1: from a tile's max to its
# exponentials one compare and one select, as without the lazy rescale;
# v3l's test adds four operations there, a suspect for its 2.4% loss at
# head_dim 64), beside the default:
#   v3l    the default build (lazy at 128, 256 and D = 192)
#   rb14   the raw bound where the default has the lazy rescale
#   rb15   and the lazy rescale at head_dim 64 too (ptxas: 20 bytes of
#          spills in the three-consumer split-loop instance)
#   lz15   v3l's test at head_dim 64 too (call 4's lz, again beside rb15)
# on the grid, long, dims, many-short and ragged scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/lazy_bound.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "v3l=$cu;rb14=$cu -DKSEEK_FA_LAZY_RAW_BOUND=1;rb15=$cu -DKSEEK_FA_LAZY_RAW_BOUND=1 -DKSEEK_FA_LAZY_RESCALE=15;lz15=$cu -DKSEEK_FA_LAZY_RESCALE=15" \
  'grid_*' 'long_*' 'dims_*' 'many_short_*' 'ragged_*'
