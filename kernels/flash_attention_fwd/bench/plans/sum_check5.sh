#!/usr/bin/env bash
# One device call (about 220 s of wall time; no carry needed): the rows
# that v4k's final run (KSEEK_FA_SC_K_GLOBAL=1 with
# KSEEK_FA_SC_EARLY_RELEASE=2) found lower than v4j's, with 32 samples and
# their spans on the GPU's timeline, beside each switch alone: kg
# (K_GLOBAL=1 alone) and er (EARLY_RELEASE=2 alone). The decode rows run
# kernels that neither switch changes, so they show the rows' noise.
# def is v4j (both switches off), kger v4k.
# Measured (bench/results/sum_check5_h100.txt): kg alone 0.978x def over
# the 15 rows (ragged s100 -4%, heads1 head_dim 128 full -8%), er alone
# 0.999x, kger 0.984x: S again's unrolled code in the key-tile loops
# (bench/plans/sum_check6.sh then measured it rolled).
# NOTES.md: "v4k".
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check5.sh
# Since v4l hopper.cu has no KSEEK_FA_SC_K_GLOBAL=1 (an #error) and its
# default is 2: to repeat this plan, run it at commit 3672bae.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 32 --budget-s 0.3}"
rows=('heads1_*' 'ragged_s100_hd128_*' 'decode_q8_k8192_hd64_causal_bf16' 'decode_q16_k8192_hd64_causal_bf16'
  'dims_hd96_full_s1024_bf16' 'dims_hd80_full_s1024_bf16' 'grid_hd128_full_s2048_bf16')
timeline_of "${rows[@]}"
run_plan "def=$cu -DKSEEK_FA_SC_K_GLOBAL=0 -DKSEEK_FA_SC_EARLY_RELEASE=0;kger=$cu -DKSEEK_FA_SC_K_GLOBAL=1 -DKSEEK_FA_SC_EARLY_RELEASE=2;kg=$cu -DKSEEK_FA_SC_K_GLOBAL=1 -DKSEEK_FA_SC_EARLY_RELEASE=0;er=$cu -DKSEEK_FA_SC_K_GLOBAL=0 -DKSEEK_FA_SC_EARLY_RELEASE=2" \
  "${rows[@]}"
