#!/usr/bin/env bash
# One device call (about 150 s; carry .anchors): Nsight Compute on the
# lowest scenario of v3l's final run, decode_b16_k4096_gqa16_hd128_bf16
# (0.87x cuDNN, 0.90x FA3), which runs on version 1 with its 16 GQA heads
# packed into one row tile and split keys (v3l's call 1: not the decode
# kernel), no timing table:
#   ncu_*     version 1's kernel (AttentionForward<bf16, 128>): its DRAM
#             throughput against the HBM's 4.8 TB/s, its waves and stalls
#   ncu_2_*   the combine (CombineSplits) after it
#   ncu_fa3_* FA3's forward kernel on the same scenario (its split)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_decode.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
scen=decode_b16_k4096_gqa16_hd128_bf16
run_profile "v3l=kernels/flash_attention_fwd/hopper.cu" \
  "v3l $scen AttentionForward<;v3l $scen CombineSplits" "$scen"
