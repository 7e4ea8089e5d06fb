#!/usr/bin/env bash
# One device call (about 150 s): head_dim 136-192 on the D = 192 kernel
# (the default since v3j, 112 keys per tile) beside D = 256 with narrow S
# and P V (as before v3j) and D = 192 at 80 and 96 keys, on every
# head_dim 136-192 scenario; then the builds and cuDNN with the inputs at
# several device addresses
# (placement.py). Profiles (FA_NCU) go in a call of their own: with them
# the call returns more than the 8 files the device gives back, and the
# table is lost (NOTES.md v3j, call 1). Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/d192_placement.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
cu=kernels/flash_attention_fwd/hopper.cu
export FA_VARIANTS="a=$cu;d256=$cu -DKSEEK_FA_D192=0;d192n80=$cu -DKSEEK_FA_HD192_BLOCK_N=80;d192n96=$cu -DKSEEK_FA_HD192_BLOCK_N=96"
export FA_SCENARIOS="$(cat kernels/flash_attention_fwd/bench/lists/hd136_192.txt),grid_hd256_full_s4096_bf16,grid_hd128_full_s2048_bf16"
export FA_PLACEMENT="gqa4_hd160_full_s2048_bf16,dims_hd160_full_s4096_bf16,dims_hd192_full_s4096_bf16,dims_hd192_causal_s16384_bf16,grid_hd128_full_s2048_bf16"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
