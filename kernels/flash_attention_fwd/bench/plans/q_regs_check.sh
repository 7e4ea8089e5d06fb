#!/usr/bin/env bash
# One device call (about 150 s of wall time; no carry needed): the rows
# where Q_REGS=3's final run (an H100, 2026-12-07) read 3-7% below v4h's
# final run while FA3 and cuDNN did not move (many_short s32, prefill_q256
# hd128 causal and hd64 full, long_single hd64), beside the rows it gained
# on in q_regs_two_q.sh, and the control (causal s4096).
#   def  v4h (-DKSEEK_FA_Q_REGS=0; v4h was the default when it ran, v4i
#        has KSEEK_FA_Q_REGS=2 KSEEK_FA_Q_REGS_MIN_N=128)
#   qr   -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=0 (every tile)
#   qrm  -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=128: not on the
#        short-key tiles (80 and 64 keys), whose items read Q once
# Prediction: if the losses are Q in registers' own, qr loses on
# many_short s32 (short-key tiles: one tile per item, so the ldmatrix and
# its wait come with no reuse) and qrm does not; the prefill and
# long_single rows take no Q_REGS instance (their items run on 128-key
# tiles past 1024 keys) and so do not move: their drop was the run's.
# Measured (bench/results/q_regs_check_h100.txt): the first half held,
# the second did not: head_dim 64's two-Q-buffer instance loses 2.5-3.5%
# on those rows; v4i takes Q in registers at head_dim 128 only.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q_regs_check.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu -DKSEEK_FA_Q_REGS=0;qr=$cu -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=0;qrm=$cu -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=128" \
  'many_short_b512_s32_*' 'many_short_b256_s65_hd128_full_f16' \
  'prefill_q256_k16384_hd128_causal_bf16' 'prefill_q256_k16384_hd64_full_bf16' \
  'long_single_s32768_h1_hd64_*' \
  'grid_hd128_full_s1024_bf16' 'grid_hd128_full_s512_bf16' 'grid_hd64_causal_s512_bf16' \
  'ragged_s1000_hd128_full_bf16' 'ragged_s100_hd128_full_bf16' 'qlong_q1024_k512_hd128_full_f16' \
  'grid_hd128_causal_s4096_bf16'
