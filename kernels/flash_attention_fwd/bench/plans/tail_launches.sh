#!/usr/bin/env bash
# One device call (about 400 s of wall time; no carry needed): the tail's
# shares as a grid of their own (KSEEK_FA_TAIL_LAUNCHES=14), and whether
# the merge after the loop (KSEEK_FA_TAIL_MERGE) is what moves ptxas to
# put the wait for the previous tile's P V (W0) before the softmax in
# D = 192's shares' instance.
# v4g measured the shares' instance (kTailShares) walking the whole pairs
# 1.8-2% slower per key tile at head_dim 128 and 4% at D = 192 (there
# ptxas put W0 before the softmax: NOTES.md v4g, calls 2 and 5); with two
# grids the whole pairs run in the plain instance and only the shares'
# segments in the shares' one, for a grid's start at the seam. The
# builds' printout (run_variants.sh, sass_loops.py --waits) names every
# loop whose W0 comes before the softmax.
#   def   the default (v4g)
#   tl    KSEEK_FA_TAIL_LAUNCHES=14 (head_dim 128 and 256 shares, two grids)
#   tl14  tl with the shares at D = 192 too (KSEEK_FA_TAIL_SPLIT=14)
#   tlk   tl with the shares from 512 saved keys (TAIL_MIN_SAVED_KEYS=512;
#         v4g's 1536 leaves the grid's head_dim 128 s2048 rows, 880 keys
#         saved, without them)
#   s14   -DKSEEK_FA_TAIL_SPLIT=14 (one grid, the shares at D = 192 too)
#   m0    s14 without the merge of a pair's first segment (TAIL_MERGE=0):
#         whether the merge's accumulator writes after the loop move W0
#   w3    both causal switches at 3072 mean keys (HD128_CAUSAL_WIDE_KEYS,
#         CAUSAL_CLUSTER_MIN_KEYS; v4g: 4096): prefill_q333_k4097 clustered
#         (v4g call 4, at 2048: +1.6-4.6% there, -2 to -3.5% on the s4096
#         rows, which 3072 leaves alone)
# Prediction: tl +1.5-2% against def at head_dim 128 s8192 and s16384,
# within 0.5% at 256 and elsewhere; tl14 +1-3% against def at dims_hd192
# s16384; tlk +1-2% at grid_hd128_full_s2048. The printout flags s14's
# D = 192 shares' loops, and m0's if the merge is not the cause.
# w3: prefill_q333_k4097 +1.5-4.5% against def, the s4096 rows unchanged.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tail_launches.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
s14="$cu -DKSEEK_FA_TAIL_SPLIT=14"
tl="$cu -DKSEEK_FA_TAIL_LAUNCHES=14"
builds="def=$cu;tl=$tl;tl14=$tl -DKSEEK_FA_TAIL_SPLIT=14;tlk=$tl -DKSEEK_FA_TAIL_MIN_SAVED_KEYS=512"
builds+=";s14=$s14;m0=$s14 -DKSEEK_FA_TAIL_MERGE=0"
builds+=";w3=$cu -DKSEEK_FA_HD128_CAUSAL_WIDE_KEYS=3072 -DKSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=3072"
run_plan "$builds" 'dims_hd192_full_s16384_bf16' 'grid_hd128_full_s16384_bf16' \
  'grid_hd128_full_s8192_bf16' 'grid_hd128_full_s2048_bf16' 'grid_hd256_full_s16384_bf16' \
  'grid_hd128_causal_s4096_bf16' 'ragged_s4097_hd128_causal_bf16' \
  'prefill_q333_k4097_hd128_*causal*'
