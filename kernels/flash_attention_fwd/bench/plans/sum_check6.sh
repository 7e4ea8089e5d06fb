#!/usr/bin/env bash
# One device call (about 250 s of wall time; no carry needed): v4k
# (KSEEK_FA_SC_K_GLOBAL=1, S again from global memory with its 8-key
# blocks unrolled: the key-tile loops 1.7-1.9x longer than v4j's) beside
# kg2 (KSEEK_FA_SC_K_GLOBAL=2: the same in a rolled loop, one block's
# code) and v4j (both switches off) on the rows where v4k lost (one-tile
# items, heads1 and head_dim 80/96 s1024; sum_check5_h100.txt) and where
# it won, with the short rows' spans on the GPU's timeline. The decode
# rows run kernels that neither switch changes: the rows' noise.
# Measured (bench/results/sum_check6_h100.txt): kg2 1.015x v4k over the 22
# rows, v4k's losses recovered (heads1 head_dim 128 full +5.6%, ragged
# s100 +4%) and its gains kept; v4j 1.002x.
# NOTES.md: "v4k" and the next list after it.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check6.sh
# Since v4l hopper.cu has no KSEEK_FA_SC_K_GLOBAL=1 (an #error) and its
# default is 2: to repeat this plan, run it at commit 3672bae.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 24 --budget-s 0.3}"
timeline_of 'ragged_s100_hd128_*' 'heads1_b8_s2048_hd128_*' 'decode_q8_k8192_hd64_causal_bf16'
run_plan "def=$cu;kg2=$cu -DKSEEK_FA_SC_K_GLOBAL=2;v4j=$cu -DKSEEK_FA_SC_K_GLOBAL=0 -DKSEEK_FA_SC_EARLY_RELEASE=0" \
  'ragged_s100_hd128_*' 'heads1_b8_s2048_hd128_*' 'heads1_b8_s2048_hd64_full_bf16' \
  'dims_hd80_full_s1024_bf16' 'dims_hd96_full_s1024_bf16' 'dims_hd96_full_s4096_bf16' \
  'grid_hd64_full_s512_bf16' 'grid_hd64_full_s8192_bf16' 'grid_hd64_causal_s4096_bf16' \
  'grid_hd128_full_s2048_bf16' 'grid_hd128_full_s8192_bf16' 'grid_hd128_full_s16384_bf16' \
  'grid_hd128_causal_s2048_bf16' 'grid_hd128_causal_s16384_bf16' \
  'qlong_q3001_k1000_hd128_causal_bf16' 'prefill_q333_k4097_hd128_causal_bf16' \
  'long_single_s32768_h1_hd64_full_bf16' 'decode_q8_k8192_hd64_causal_bf16'
