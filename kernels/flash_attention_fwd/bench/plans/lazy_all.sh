#!/usr/bin/env bash
# One device call (about 250 s held from cold): the lazy rescale (O rescaled
# only when a row's reference max moves by more than 2^8 in P,
# KSEEK_FA_LAZY_RESCALE, on at head_dim 128, 256 and D = 192) against O
# rescaled at every tile everywhere, on every WGMMA head_dim that has it
# (each scenario runs one D, so the table's classes split the effect by
# head_dim); tile_costs.sh measured 0.8% fewer cycles per 128 keys without
# it at 128 (v3r's call 6; on the head_dim 128 scenarios lz0 runs what
# KSEEK_FA_LAZY_RESCALE=12 would). The default twice (the spread of equal builds):
#   def      the default
#   lz0      KSEEK_FA_LAZY_RESCALE=0
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/lazy_all.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;lz0=$cu -DKSEEK_FA_LAZY_RESCALE=0;def2=$cu" \
  '[!dm]*hd128*' '[!dm]*hd256*' '*hd192*' '*hd160*'
