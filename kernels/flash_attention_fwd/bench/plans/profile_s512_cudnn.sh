#!/usr/bin/env bash
# One device call (about 200 s; no carry needed): Nsight Compute on the
# grid's s512 rows that trail cuDNN most (v4b again: grid_hd256_causal_s512
# 0.958, grid_hd64_causal_s512 0.974-0.986; not padding: NOTES.md v4c),
# ours beside cuDNN's kernel, no timing table:
#   ncu_*, ncu_2_*          the default's WGMMA kernel on each scenario
#   ncu_cudnn_*, _cudnn_2_* cuDNN's attention kernel on the same ones
#                           (run_variants.sh's FA_NCU_CUDNN)
# What to read: duration and SM cycles, issue slots busy, the grid and
# block cuDNN launches (its tile sizes are in its name: 64-row tiles),
# achieved occupancy, L2 hit rate and DRAM throughput (are our K/V loads
# waiting on HBM at s512?), and the stall reasons by instruction.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_s512_cudnn.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
a=grid_hd256_causal_s512_bf16
b=grid_hd64_causal_s512_bf16
export FA_NCU_CUDNN="$a;$b"
run_profile "v4c=$cu" "v4c $a;v4c $b"
