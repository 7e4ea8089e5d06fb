#!/usr/bin/env bash
# One device call (about 300 s from cold; carry .anchors): the two grid
# rows furthest under FA3 in v3t's final run, grid_hd128_causal_s16384
# (0.976-0.987x) and grid_hd64_causal_s2048 (0.979-0.980x), beside FA3:
# Nsight Compute of the default's WGMMA kernel and FA3's forward kernel
# on each (ncu_*, ncu_2_*, ncu_fa3_*, ncu_fa3_2_*), and power.py on both
# and on grid_hd128_full_s16384 (1.028x) for reference: sustained
# TFLOP/s, SM clock, board power, energy per PFLOP. It makes more files
# than a call returns (8): profile_causal2.sh packs them.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_causal.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
a=grid_hd128_causal_s16384_bf16 b=grid_hd64_causal_s2048_bf16
export FA_POWER="$a,$b,grid_hd128_full_s16384_bf16"
run_profile "def=$cu" "def $a;def $b" "$a;$b"
