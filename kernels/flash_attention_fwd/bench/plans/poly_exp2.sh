#!/usr/bin/env bash
# One device call (about 300 s from cold): part of the softmax's
# exponentials by a polynomial on the FMA pipe instead of the MUFU
# (KSEEK_FA_POLY_EXP2, Exp2Poly): at head_dim 64 the MUFU's 16
# exponentials per clock per SM match the tensor cores' rate (0.0625
# cycles per score each) and the 256-query family ran at 87% of both
# (item_costs.py, v3s). On every head_dim 64 WGMMA scenario but decode and
# many-short, and the head_dim 128 grid:
#   def      the default (v3s)
#   p64e2    KSEEK_FA_POLY_EXP2=1, every 2nd group of 8 keys (50%) at 64
#   p64e4    every 4th (25%) at 64
#   p64e8    every 8th (12.5%) at 64
#   p128e4   KSEEK_FA_POLY_EXP2=2, every 4th at 128 (MUFU at half the
#            tensor rate there: expected no gain)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/poly_exp2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
px="$cu -DKSEEK_FA_POLY_EXP2"
run_plan "def=$cu;p64e2=$px=1 -DKSEEK_FA_POLY_EXP2_EVERY=2;p64e4=$px=1;p64e8=$px=1 -DKSEEK_FA_POLY_EXP2_EVERY=8;p128e4=$px=2;def2=$cu" \
  '[!dm]*hd64*' 'grid_hd128*'
