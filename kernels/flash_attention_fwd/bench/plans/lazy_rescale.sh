#!/usr/bin/env bash
# One device call (about 200 s): O's rescale skipped where no row's softmax
# reference moved (NOTES.md v3l), beside the default build:
#   v3k    the default build
#   tn     no TMA stores on head_dim 64's 128-key instances
#          (KSEEK_FA_TMA_LONG_TILES=2; uniform_q.sh: +1.3% at head_dim 64;
#          the narrow ones store without TMA now in every build)
#   lz     tn and the lazy rescale at every head dim
#          (KSEEK_FA_LAZY_RESCALE=15): a row's reference moves only when a
#          tile's max passes it by more than 2^8 in P; O's D / 2
#          multiplications per thread and tile (64 of about 515
#          instructions per tile at head_dim 128) run only in a warp where
#          a row moved
# on the grid, long, dims, qlong and GQA head_dim 128, many-short, head_dim
# 64 prefill and ragged scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/lazy_rescale.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
tn="-DKSEEK_FA_TMA_LONG_TILES=2"
run_plan "v3k=$cu;tn=$cu $tn;lz=$cu $tn -DKSEEK_FA_LAZY_RESCALE=15" \
  'grid_*' 'long_*' 'dims_*' 'qlong_*hd128*' 'gqa*hd128*' 'many_short_*' 'prefill_*hd64*' 'ragged_*'
