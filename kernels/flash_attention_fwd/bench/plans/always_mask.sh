#!/usr/bin/env bash
# One device call (about 150 s of wall time; no carry needed): where the
# key-tile loops wait for the previous tile's P V. bench/cubin_events.py
# (no GPU needed) with sass_loops.py --waits finds that wait (W0) before
# the softmax in 14 of the default's loops, as the device's cuobjdump did:
# head_dim 256's and head_dim 64's kernels without the split loop (short
# items: head_dim 256 under 32 key tiles, s512-s2048; head_dim 64 causal
# under 8) and head_dim 128's 160-key two-Q-buffer kernel without
# clusters; and in Q in registers' one-Q-buffer instances and D = 192's
# shares (KSEEK_FA_TAIL_SPLIT=14), where those rows lost 2-5%.
#   def   the default (v4h)
#   am    -DKSEEK_FA_ALWAYS_MASK=5: head_dim 64 and 256 without the split
#         loop mask every tile instead of testing it first (a branch): their
#         W0 back after the softmax (by cubin_events.py), no new spill in a loop
#   amp   am with -DKSEEK_FA_PIN_PV_WAIT=2: at head_dim 128 a store that
#         never runs, on the tile's row sums, before W0 (ptxas moves a
#         wgmma wait above arithmetic, not above a store): no loop marked
#   ampq  amp with -DKSEEK_FA_Q_REGS=2 -DKSEEK_FA_Q_REGS_ONE_Q_BUFFER=1: Q in
#         registers at head_dim 128 on tiles of up to 128 keys, one Q buffer
#         too, now with W0 after the softmax there
# Rows: head_dim 256 under 2560 keys per item, head_dim 64 causal s512,
# head_dim 128's rows of the 128- and 160-key kernels, and controls (head_dim 256 and 64 long: code unchanged but for
# amp's store at 128). 10 samples each, interleaved beside cuDNN.
# Prediction: am +1-4% on grid hd256 s512-s2048 and hd64 causal s512;
# amp as am, +0.5-1% where the 160-key kernel runs without clusters;
# ampq +0.5-1.5% on grid hd128 s512-s1024 and causal s512-s4096 (where
# one Q buffer lost 2-4% with W0 before the softmax). A candidate default only if no row loses more than
# the noise (0.5%, 2% on hd256 long) and its final run's eval is all correct.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/always_mask.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.15}"
am="-DKSEEK_FA_ALWAYS_MASK=5"
amp="$am -DKSEEK_FA_PIN_PV_WAIT=2"
run_plan "def=$cu;am=$cu $am;amp=$cu $amp;ampq=$cu $amp -DKSEEK_FA_Q_REGS=2 -DKSEEK_FA_Q_REGS_ONE_Q_BUFFER=1" \
  'grid_hd256_*_s512_*' 'grid_hd256_*_s1024_*' 'grid_hd256_*_s2048_*' 'grid_hd64_causal_s512_*' \
  'gqa4_hd256_*_s2048_bf16' 'ragged_s1000_hd256_*_bf16' 'prefill_q256_k16384_hd256_*' \
  'grid_hd128_full_s512_bf16' 'grid_hd128_full_s1024_bf16' 'grid_hd128_full_s2048_bf16' \
  'grid_hd128_full_s4096_bf16' 'grid_hd128_causal_s512_bf16' 'grid_hd128_causal_s1024_bf16' \
  'grid_hd128_causal_s2048_bf16' 'grid_hd128_causal_s4096_bf16' 'gqa4_hd128_*_s2048_bf16' \
  'ragged_s1000_hd128_*_bf16' 'ragged_s3001_hd128_full_bf16' 'qlong_q1024_k512_hd128_full_f16' \
  'grid_hd256_full_s16384_bf16' 'grid_hd128_full_s16384_bf16' 'grid_hd64_full_s4096_bf16'
