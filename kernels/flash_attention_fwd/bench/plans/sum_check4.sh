#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): v4j beside
# KSEEK_FA_SC_K_GLOBAL=1 (the sum check's S again reading K from global
# memory, one 8-key block's loads at a time, so K is released right after
# S as before v4j) on the grid's bf16 rows and sum_check3.sh's others.
# On its 17 rows sum_check3.sh found the unsafe form (ek: K released after
# S, S again from a stage the producer may refill) 1.016x v4j, and the
# first safe form (all of a tile's loads at once: ptxas spilled in 44
# key-tile loops) 0.988x. kger: kg with KSEEK_FA_SC_EARLY_RELEASE=2 (at
# head_dim 128 and its narrow 80/96 Q released after a passed test, before
# the P V wait; the early release alone was +1.1% there).
# def is v4j (both switches off: the default when it ran; v4k has kger's).
# Measured (bench/results/sum_check4_h100.txt): kg 1.002x def over the
# 47 rows, kger 1.008x (grid head_dim 128 +2%, head_dim 64 full s512
# +5%, ragged s100 -6.5%); kger became v4k.
# NOTES.md: "Where v4j's sum check costs" and "v4k".
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check4.sh
# Since v4l hopper.cu has no KSEEK_FA_SC_K_GLOBAL=1 (an #error) and its
# default is 2: to repeat this plan, run it at commit 3672bae.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu -DKSEEK_FA_SC_K_GLOBAL=0 -DKSEEK_FA_SC_EARLY_RELEASE=0;kg=$cu -DKSEEK_FA_SC_K_GLOBAL=1 -DKSEEK_FA_SC_EARLY_RELEASE=0;kger=$cu -DKSEEK_FA_SC_K_GLOBAL=1 -DKSEEK_FA_SC_EARLY_RELEASE=2" \
  'grid_*_bf16' 'grid_hd64_full_s512_f16' 'prefill_q333_k4097_hd128_*' \
  'qlong_q3001_k1000_hd128_causal_bf16' 'ragged_s1000_hd128_causal_bf16' 'ragged_s100_hd128_full_bf16' \
  'long_single_s32768_h1_hd64_full_bf16' 'prefill_q256_k16384_hd128_full_bf16' \
  'gqa8_hd64_full_s2048_bf16' 'dims_hd96_full_s4096_bf16'
