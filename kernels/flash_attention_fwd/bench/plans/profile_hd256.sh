#!/usr/bin/env bash
# One device call (about 120 s; carry .anchors): Nsight Compute on
# head_dim 256 at few keys per item, where the default trails FA3 most in
# the grid (v3l: 0.93x at grid_hd256_full_s512, rising to 1.03x at s16384:
# a cost per item), no timing table:
#   ncu_*     the default build's WGMMA kernel on grid_hd256_full_s512_bf16
#   ncu_2_*   the same with the items located by multiplications at 256
#             (KSEEK_FA_FAST_LOCATE=7)
#   ncu_fa3_* FA3's forward kernel on the same scenario
# Read per instruction as v3k read head_dim 128 at s512 (NOTES.md v3k):
# an item's start, first tile, loop tile, last P V and epilogue.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_hd256.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
scen=grid_hd256_full_s512_bf16
run_profile "v3l=$cu;fl256=$cu -DKSEEK_FA_FAST_LOCATE=7" "v3l $scen;fl256 $scen" "$scen"
