#!/usr/bin/env bash
# One device call (about 150 s from cold; carry .anchors): Nsight Compute,
# no timing table, on grid_hd128_full_s1024_bf16, where the default trails
# FA3 by 5% (v3n: 0.95x) with the same instruction count (v3n's call 1):
#   ncu_*     the default's kernel (two Q buffers, 128-key tiles)
#   ncu_2_*   FA3's configuration in ours: one Q buffer, 176-key tiles
#             (KSEEK_FA_HD128_FULL_Q2_UPTO=0; v3l's call 7 measured it 0.987x
#             the default over the grid, s512 -5%)
#   ncu_fa3_* FA3's forward kernel (128 x 176 tiles, one Q buffer)
# The per-instruction CSVs come back in ncu_raw.tgz: read ours on 176 keys
# against FA3 region by region (first tile, loop, last P V, epilogue) and
# per loop tile (waits for S, the turn, K and V; busy samples per key) as
# NOTES.md v3n's call 1 did for the default.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_hd128_176.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
scen=grid_hd128_full_s1024_bf16
run_profile "def=$cu;one=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=0" "def $scen;one $scen" "$scen"
