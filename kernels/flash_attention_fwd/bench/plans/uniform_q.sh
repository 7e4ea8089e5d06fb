#!/usr/bin/env bash
# One device call (about 220 s): after_v3k.sh's findings and Q's
# descriptors per tile (NOTES.md v3l), beside the default build:
#   v3k    the default build
#   uq14   Q's descriptors derived in every key tile at head_dim 128, 256
#          and the D = 192 kernel (KSEEK_FA_Q_DESC_PER_TILE=14): the
#          profile of grid_hd128_full_s4096 showed 16 R2UR per loop tile,
#          the eight 64-bit Q descriptors hoisted into vector registers;
#          ptxas: the 256 and 192 split-loop instances no longer spill
#   uq15   and at head_dim 64 (its three-consumer split-loop instance then
#          spills 24 bytes)
#   t64    no TMA stores on head_dim 64's 128-key instances, only on its
#          short tiles (KSEEK_FA_TMA_LONG_TILES=2): after_v3k.sh's notma
#          read long_single_s32768_h1_hd64 8-9% and grid_hd64_causal
#          s512-s1024 2-4% faster, many-short head_dim 64 3-7% slower
#   cand   uq14 + t64 + no TMA stores on the narrow instances
#          (KSEEK_FA_TMA_NARROW=0: after_v3k.sh's tn0, +1.2% at head_dim
#          80 and 96)
# on the grid, long, dims, qlong and GQA head_dim 128, many-short, head_dim
# 64 prefill and ragged scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/uniform_q.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "v3k=$cu;uq14=$cu -DKSEEK_FA_Q_DESC_PER_TILE=14;uq15=$cu -DKSEEK_FA_Q_DESC_PER_TILE=15;t64=$cu -DKSEEK_FA_TMA_LONG_TILES=2;cand=$cu -DKSEEK_FA_Q_DESC_PER_TILE=14 -DKSEEK_FA_TMA_LONG_TILES=2 -DKSEEK_FA_TMA_NARROW=0" \
  'grid_*' 'long_*' 'dims_*' 'qlong_*hd128*' 'gqa*hd128*' 'many_short_*' 'prefill_*hd64*' 'ragged_*'
