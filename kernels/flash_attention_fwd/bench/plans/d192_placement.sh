#!/usr/bin/env bash
# One device call (about 300 s): the D = 192 kernel (KSEEK_FA_D192) at 80,
# 96 and 112 keys per tile and the TMA loads' 128-byte L2 promotion beside
# the default build on every head_dim 136-192 scenario; then the default
# build and cuDNN with the inputs at several device addresses
# (placement.py); then Nsight Compute on hd160 and hd192 of one shape.
# NOTES.md v3j, "Device plan". Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/d192_placement.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
cu=kernels/flash_attention_fwd/hopper.cu
export FA_VARIANTS="a=$cu;d192=$cu -DKSEEK_FA_D192=1;d192n96=$cu -DKSEEK_FA_D192=1 -DKSEEK_FA_HD192_BLOCK_N=96;d192n112=$cu -DKSEEK_FA_D192=1 -DKSEEK_FA_HD192_BLOCK_N=112;p128=$cu -DKSEEK_FA_L2_PROMOTION=2"
export FA_SCENARIOS="$(cat kernels/flash_attention_fwd/bench/lists/hd136_192.txt),grid_hd256_full_s4096_bf16,grid_hd128_full_s2048_bf16"
export FA_PLACEMENT="gqa4_hd160_full_s2048_bf16,dims_hd160_full_s4096_bf16,dims_hd192_full_s4096_bf16,dims_hd192_causal_s16384_bf16,grid_hd128_full_s2048_bf16"
export FA_NCU="a dims_hd160_full_s4096_bf16;a dims_hd192_full_s4096_bf16"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
