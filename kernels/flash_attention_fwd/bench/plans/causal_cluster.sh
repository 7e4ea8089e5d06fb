#!/usr/bin/env bash
# One device call (about 360 s of wall time; no carry needed): causal
# items in clusters of two blocks (KSEEK_FA_CAUSAL_CLUSTER), on the 65
# causal scenarios whose items would take them (whole items at head_dim
# 104-256, an even number of query tiles per head, no more queries than
# keys). v4d's nocl build measured the clusters at 3-5% of head_dim 128's
# non-causal rows from s4096 on, which causal rows never had; FA3 trails
# us there by less than that (grid s2048-s16384 causal 0.97-0.99x on the
# H200). Prediction: +1-4% on head_dim 128's causal grid rows from s4096,
# less on 256 (v3o: +1-2% there without masking), nothing to a loss at
# s512-s1024 (one or two pairs per cluster, the static order's tail).
#   def    the default (no causal clusters)
#   cc     KSEEK_FA_CAUSAL_CLUSTER=14: head_dim 128, D = 256 and D = 192
#   cc4k   cc with head_dim 128's 176-key causal tiles from 4096 keys per
#          mean item (KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=4096: without
#          clusters -0.5-0.9% at grid s8192, v4d)
#   tr     cc in the trace build (KSEEK_FA_TRACE): item_trace.py on grid
#          causal s16384 and s4096 at head_dim 128, whose tail and
#          timeline show how evenly the static order with its backward
#          rounds shares the pairs (emulated with the cz_ shapes)
# CAUSAL_CLUSTER_SHORT=1: def and cc only; 2: def and cc on the 16 grid
# rows from s2048 on and the 3 long causal rows (about 120 s, for a call
# with little device time left).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_cluster.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
c="$cu -DKSEEK_FA_CAUSAL_CLUSTER=14"
builds="def=$cu;cc=$c"
if [[ ${CAUSAL_CLUSTER_SHORT:-0} == 0 ]]; then
  builds+=";cc4k=$c -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=4096;tr=$c -DKSEEK_FA_TRACE=1"
  item_trace_of tr grid_hd128_causal_s16384_bf16,grid_hd128_causal_s4096_bf16 "--bins 10"
fi
globs=()
if [[ ${CAUSAL_CLUSTER_SHORT:-0} == 2 ]]; then
  for d in 128 256; do
    for n in 2048 4096 8192 16384; do globs+=("grid_hd${d}_causal_s${n}_*"); done
    globs+=("long_single_s32768_h1_hd${d}_causal_*")
  done
else
  for d in 128 256; do
    globs+=("grid_hd${d}_causal_*" "gqa4_hd${d}_causal_s2048_*" "gqa8_hd${d}_causal_s2048_*"
            "mqa_hd${d}_causal_s2048_*" "ragged_s1000_hd${d}_causal_*" "ragged_s3001_hd${d}_causal_*"
            "prefill_q2048_k16384_hd${d}*causal*" "prefill_q1000_k8192_hd${d}*causal*"
            "long_single_s32768_h1_hd${d}_causal_*" "heads1_b8_s2048_hd${d}_causal_*")
  done
  globs+=('dims_hd160_causal_*' 'dims_hd192_causal_*' 'gqa4_hd160_causal_*' 'gqa4_hd192_causal_*'
          'ragged_s3001_hd192_causal_*')
fi
run_plan "$builds" "${globs[@]}"
