#!/usr/bin/env bash
# One device call (about 120 s of wall time; no carry needed): v4g's
# causal pairs in clusters on the 176-key tiles (from 4096 mean keys per
# item) moved further down, to the grid's s4096 and s2048 causal rows
# (0.996x and 1.008x FA3 in v4g's final run, single blocks on 128-key
# tiles).
#   def  the default (v4g)
#   w2   KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=2048 and
#        KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=2048 (s4096: 2048 mean keys)
#   w1   both 1024 (s2048, GQA s2048)
# Prediction: within 1% either way at s4096 (the clusters on 128-key tiles
# lost 1% there, v4f call 3; the 176-key tiles pad about 88 keys more per
# item on the diagonal, 4% of an s4096 item; the pairs' shared loads and
# the wider tiles gained 2% at s8192, v4f call 5); a loss at s2048.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_cluster_2k.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
builds="def=$cu;w2=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=2048 -DKSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=2048"
builds+=";w1=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=1024 -DKSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=1024"
run_plan "$builds" 'grid_hd128_causal_s[1248]*' 'ragged_s4097_hd128_causal_*' \
  'ragged_s3001_hd128_causal_bf16' 'prefill_q333_k4097_hd128_*causal*' \
  'gqa4_hd128_causal_s2048_bf16' 'mqa_hd128_causal_s2048_bf16'
