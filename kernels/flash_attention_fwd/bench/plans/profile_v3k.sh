#!/usr/bin/env bash
# One device call (about 150 s; carry .anchors): NOTES.md "Next (after
# v3k's measurement)" items 1 and 4 by Nsight Compute, no timing table:
#   ncu_*    the default build's WGMMA kernel on grid_hd128_full_s4096_bf16
#            (where head_dim 128 non-causal trails FA3 by 5%)
#   ncu_fa3_* FA3's forward kernel on the same scenario
#   ncu_2_*  the decode kernel on decode_b16_k4096_gqa16_hd128_bf16 (0.87x
#            cuDNN): its DRAM throughput against the HBM's
# That is 8 files with builds.tgz and ncu_raw.tgz, as many as a call
# returns.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_v3k.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_profile "v3k=$cu" \
  "v3k grid_hd128_full_s4096_bf16;v3k decode_b16_k4096_gqa16_hd128_bf16 AttentionDecode" \
  grid_hd128_full_s4096_bf16
