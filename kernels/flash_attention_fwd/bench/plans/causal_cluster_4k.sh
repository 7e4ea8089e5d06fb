#!/usr/bin/env bash
# One device call (about 150 s of wall time; no carry needed): v4f's
# causal pairs in clusters (176-key tiles from 6144 mean keys per item)
# against the same from 4096 mean keys (the grid's s8192 causal rows).
#   def  the default (v4f)
#   w4   KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=4096 and
#        KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=4096. Prediction: the s8192
#        causal rows (0.989-0.993x FA3 in v4f's final run) gain about as
#        much as the clusters gave s16384 (+3%) less what the 176-key
#        tiles lost there without clusters (v4d: -0.5-0.9%): +1-2%.
# Rows: the causal head_dim 128 rows with 2048-8192 mean keys, and
# s16384 (unchanged: its spread is the noise).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_cluster_4k.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
builds="def=$cu;w4=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=4096 -DKSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=4096"
run_plan "$builds" 'grid_hd128_causal_s[48]*' 'grid_hd128_causal_s16384_bf16' \
  'prefill_q1000_k8192_hd128_causal_bf16' 'prefill_q333_k4097_hd128_causal_bf16' \
  'ragged_s4097_hd128_causal_*' 'prefill_q2048_k16384_hd128_gqa4_causal_f16' \
  'prefill_q1000_k8192_hd128_gqa4_causal_f16'
