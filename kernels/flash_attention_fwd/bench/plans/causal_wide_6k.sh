#!/usr/bin/env bash
# One device call (about 80 s warm; no carry needed): the threshold that
# causal_wide.sh's short run pointed to (the wide causal tiles gained at
# 7692 and more keys per mean item, lost 0.5-0.9% at 4096): v4c (128-key
# causal tiles, KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=0) beside w6k (6144, v4d's
# default since) on the causal head_dim 128 rows from 4096 keys per mean
# item, grid s8192 (4096: unchanged by w6k) the control. Measured (an
# H100): +0.5-1.5% on all 8 rows w6k takes, s8192 0.0%.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_wide_6k.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "v4c=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=0;w6k=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=6144" \
  'grid_hd128_causal_s8192_*' 'grid_hd128_causal_s16384_*' 'prefill_q1000_k8192_hd128*causal*' \
  'prefill_q2048_k16384_hd128*causal*' 'long_single_s32768_h1_hd128_causal_*'
