#!/usr/bin/env bash
# One device call (about 170 s): a copy of the consumer code per consumer
# warpgroup, its index a constant there (KSEEK_FA_CONSUMER_COPIES), so
# that Q's address and descriptors are uniform values (v3l's call 1: 21
# R2UR per loop tile at head_dim 128, Q's descriptors moved from vector
# registers before each wgmma), beside the default:
#   v3l    the default build
#   cc2    copies at head_dim 128
#   cc14   copies at head_dim 128, 256 and D = 192 (not at 64: with three
#          consumers ptxas spills 24 bytes in the split-loop instance)
# on the grid, long, the D = 192 dims and ragged head_dim 128 scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/consumer_copies.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cu=kernels/flash_attention_fwd/hopper.cu
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-300}"
run_plan "v3l=$cu;cc2=$cu -DKSEEK_FA_CONSUMER_COPIES=2;cc14=$cu -DKSEEK_FA_CONSUMER_COPIES=14" \
  'grid_*' 'long_*' 'dims_hd192*' 'ragged_*hd128*'
