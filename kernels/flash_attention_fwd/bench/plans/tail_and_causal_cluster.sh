#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): the two
# switches written after v4d's final run, each beside the default.
#   def  the default
#   cc   KSEEK_FA_CAUSAL_CLUSTER=14: causal whole items in clusters too
#        (head_dim 128, D = 256, D = 192). Prediction: +1-4% on head_dim
#        128's causal grid rows from s4096 (the clusters carry 3-5% of the
#        non-causal rows there), less at 256.
#   ts   KSEEK_FA_TAIL_SPLIT=6: the candidate v4e, the last rounds' key
#        tiles in even shares over the clusters at head_dim 128 and 256, a
#        split pair merged into the registers of the segment with its
#        first tiles, where the shares save 1536 keys or more; measured
#        +1.2-1.9% on the grid rows from s4096 at head_dim 128 and +1.6%
#        at 256 s16384 (NOTES.md v4e).
# Rows: the causal grid rows from s2048 and the long causal rows at
# head_dim 128 and 256 (cc), and the non-causal rows the shares take
# (ts), with grid_hd128_full_s512 as a control (no shares: 4 key tiles).
# Each build runs on every row, so cc's non-causal rows and ts's causal
# ones time the default again (their spread is the noise).
# TAIL_SHORT=1: def and ts on the non-causal rows only, both on the GPU's
# timeline for two rows (about 130 s).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tail_and_causal_cluster.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
builds="def=$cu;ts=$cu -DKSEEK_FA_TAIL_SPLIT=6"
globs=('grid_hd128_full_s[1248]*_bf16' 'grid_hd256_full_s[1248]*_bf16' 'grid_hd128_full_s16384_f16'
       'grid_hd128_full_s512_bf16' 'gqa*_hd*_full_s2048_bf16' 'mqa_hd*_full_s2048_bf16'
       'ragged_s3001_hd*_full_bf16' 'prefill_q2048_k16384_hd128_full_bf16'
       'prefill_q1000_k8192_hd128_full_bf16' 'long_single_s32768_h1_hd*_full_bf16'
       'dims_hd1[69]*_full_*_bf16')
if [[ ${TAIL_SHORT:-0} == 1 ]]; then
  # Each kernel of a call on the GPU's timeline: does the tail add a
  # kernel, a memset or a gap beside the attention kernel?
  timeline_of 'grid_hd256_full_s16384_bf16' 'grid_hd128_full_s4096_bf16'
else
  builds+=";cc=$cu -DKSEEK_FA_CAUSAL_CLUSTER=14"
  for d in 128 256; do
    for n in 2048 4096 8192 16384; do globs+=("grid_hd${d}_causal_s${n}_*"); done
    globs+=("long_single_s32768_h1_hd${d}_causal_*")
  done
fi
run_plan "$builds" "${globs[@]}"
