#!/usr/bin/env bash
# One device call (about 200 s from cold; carry .anchors): profile_causal.sh
# again with fewer files, as the device returns at most a few: power.py on
# grid_hd128_causal_s16384, grid_hd64_causal_s2048 and
# grid_hd128_full_s16384 (default, FA3, cuDNN), and Nsight Compute of the
# default's WGMMA kernel on grid_hd128_causal_s16384 (its stalls by
# instruction). With PROFILE_FA3=1 (carry .anchors), FA3's forward kernel
# on the same shape too (ncu_fa3_*). Into $OUT: plan.log, power.txt,
# ncu_stalls.txt, ncu_details.txt (and ncu_fa3_stalls.txt,
# ncu_fa3_details.txt), the rest in rest.tgz (the per-instruction CSVs in
# its ncu_raw.tgz).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_causal2.sh
set -uo pipefail
final=${OUT:?}
tmp=$(mktemp -d)
a=grid_hd128_causal_s16384_bf16
(
  source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
  export OUT=$tmp FA_POWER="$a,grid_hd64_causal_s2048_bf16,grid_hd128_full_s16384_bf16"
  if [[ ${PROFILE_FA3:-0} == 1 ]]; then run_profile "def=$cu" "def $a" "$a"; else run_profile "def=$cu" "def $a"; fi
) > "$final/plan.log" 2>&1
for f in power.txt ncu_stalls.txt ncu_details.txt ncu_fa3_stalls.txt ncu_fa3_details.txt; do [[ -f $tmp/$f ]] && mv "$tmp/$f" "$final/"; done
tar -czf "$final/rest.tgz" -C "$tmp" .
