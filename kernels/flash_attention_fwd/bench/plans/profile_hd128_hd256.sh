#!/usr/bin/env bash
# One device call (about 200 s from cold; carry .anchors): Nsight Compute,
# no timing table, where the default trails FA3 most over the grid (v3n):
#   ncu_*       the default on grid_hd128_full_s1024_bf16 (two Q buffers,
#               128-key tiles; 0.95x FA3)
#   ncu_2_*     FA3's configuration in ours there: one Q buffer, 176-key
#               tiles (KSEEK_FA_HD128_FULL_Q2_UPTO=0)
#   ncu_3_*     the default on grid_hd256_full_s512_bf16 (0.94x FA3)
#   ncu_fa3_*   FA3 on grid_hd128_full_s1024_bf16 (128 x 176 tiles)
#   ncu_fa3_2_* FA3 on grid_hd256_full_s512_bf16 (128 x 80 tiles)
# Everything comes back in two files: profile.tgz (details and stalls
# pages, builds.tgz with the SASS) and ncu_raw.tgz (per-instruction CSVs),
# for bench/ncu_regions.py.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_hd128_hd256.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
final=${OUT:-/tmp/fa_variants}
export OUT=$final/profile
mkdir -p "$OUT"
s128=grid_hd128_full_s1024_bf16
s256=grid_hd256_full_s512_bf16
(run_profile "def=$cu;one=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=0" \
   "def $s128;one $s128;def $s256" "$s128;$s256")
mv "$OUT/ncu_raw.tgz" "$final/" 2>/dev/null
tar -C "$final" -czf "$final/profile.tgz" profile && rm -rf "$OUT"
