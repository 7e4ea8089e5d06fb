#!/usr/bin/env bash
# One device call (about 150 s of wall time; no carry needed): why the
# tail's shares as a grid of their own (KSEEK_FA_TAIL_LAUNCHES=14) lost
# 1.7-2.5% at head_dim 128 s8192 / s16384 and 256 s16384 against one grid
# (tail_launches.sh, H100) where the plain instance's whole rounds were to
# gain 2%. bench/timeline.py puts each kernel of a call on the GPU's
# timeline: the whole pairs' grid, the shares' grid, their durations and
# the gap between them (the shares' grid may start only as the first one
# completes, or its clusters before).
#   def  the default (v4g, one grid)
#   tl   KSEEK_FA_TAIL_LAUNCHES=14
# Prediction: tl's two grids overlap by a few us or none; the first grid
# shorter than def's whole call by the shares' rounds.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/timeline_tail_launches.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_plan "def=$cu;tl=$cu -DKSEEK_FA_TAIL_LAUNCHES=14" \
  'grid_hd128_full_s16384_bf16' 'grid_hd128_full_s8192_bf16' 'grid_hd256_full_s16384_bf16'
