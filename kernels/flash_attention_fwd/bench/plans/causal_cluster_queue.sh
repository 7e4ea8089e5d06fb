#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): causal
# pairs in clusters of two (KSEEK_FA_CAUSAL_CLUSTER) taken from a queue
# (KSEEK_FA_CAUSAL_CLUSTER_QUEUE, on with the clusters: rank 0's producer
# takes each pair from the stream's counter and hands it to rank 1's
# through slots in rank 1's shared memory), beside the default.
#   def   the default (causal items on single blocks, from the queue)
#   cq    KSEEK_FA_CAUSAL_CLUSTER=2: head_dim 128's causal pairs in
#         clusters. Prediction: the static order's 0.62-0.64x gone (the
#         queue balances as the single blocks' does); +1-3% on the grid's
#         causal rows from s8192 (the clusters carry 3-5% of the
#         non-causal rows there; long_single causal +3.4% in the static
#         order), less at s2048-s4096 where the pair's extra masked tile
#         weighs more (3% of the keys at s2048).
#   cq14  KSEEK_FA_CAUSAL_CLUSTER=14: D = 256 and D = 192 too (the static
#         order's long_single at 256: +0.2%).
# Rows: the causal grid rows at head_dim 128 (s1024-s16384) and 256
# (s2048-s16384), the long causal rows, causal prefill and dims rows that
# take clusters (an even query-tile count, no more queries than keys),
# and non-causal controls (the cluster instances' non-causal path, which
# the queue's code shares): every build runs every row.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/causal_cluster_queue.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
builds="def=$cu;cq=$cu -DKSEEK_FA_CAUSAL_CLUSTER=2;cq14=$cu -DKSEEK_FA_CAUSAL_CLUSTER=14"
globs=('grid_hd128_causal_s*_bf16' 'grid_hd128_causal_s8192_f16' 'grid_hd128_causal_s16384_f16'
       'grid_hd256_causal_s[248]*_bf16' 'grid_hd256_causal_s16384_bf16'
       'long_single_s32768_h1_hd*_causal_bf16' 'prefill_q2048_k16384_hd*_causal_bf16'
       'prefill_q1000_k8192_hd128_causal_bf16' 'dims_hd1[69]*_causal_s*_bf16'
       'gqa4_hd128_causal_s2048_bf16' 'heads1_b8_s2048_hd128_causal_bf16'
       'grid_hd128_full_s4096_bf16' 'grid_hd128_full_s16384_bf16' 'grid_hd256_full_s16384_bf16')
run_plan "$builds" "${globs[@]}"
