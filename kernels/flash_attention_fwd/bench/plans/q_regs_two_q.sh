#!/usr/bin/env bash
# One device call (about 170 s of wall time; no carry needed): Q in
# registers (KSEEK_FA_Q_REGS=3) where it stays after q_regs.sh, only in
# the two-Q-buffer instances (the default of KSEEK_FA_Q_REGS_ONE_Q_BUFFER):
# head_dim 128's 128-key tiles for non-causal items up to 1024 keys and
# causal ones up to 512, its short-key tiles, and head_dim 64 where it
# runs two consumers.
#   def  v4h (-DKSEEK_FA_Q_REGS=0; v4i has Q in registers at head_dim 128)
#   qr   -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=0 (as measured: every
#        tile, the short ones too)
# The rows those instances take, both 16-bit types where the grid has
# them, and grid causal s4096 as the control (one Q buffer: unchanged
# code), 20 samples each, interleaved beside cuDNN.
# Prediction (q_regs.sh's call): qr +0.5-1.5% on grid head_dim 128 full
# s512 and s1024, ragged s1000 and head_dim 64 causal s512, the control
# within the noise. A candidate default only if no row loses more than
# the noise (0.5%) and its final run's eval is all correct.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q_regs_two_q.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 20 --budget-s 0.3}"
run_plan "def=$cu -DKSEEK_FA_Q_REGS=0;qr=$cu -DKSEEK_FA_Q_REGS=3 -DKSEEK_FA_Q_REGS_MIN_N=0" \
  'grid_hd128_full_s512_*' 'grid_hd128_full_s1024_*' 'grid_hd128_causal_s512_*' \
  'grid_hd128_causal_s4096_bf16' 'grid_hd64_causal_s512_*' 'grid_hd64_causal_s1024_bf16' \
  'grid_hd64_full_s512_bf16' 'ragged_s1000_hd128_*' 'ragged_s100_hd128_full_bf16' \
  'many_short_b256_s65_hd128_full_f16' 'qlong_q1024_k512_hd128_full_f16' \
  'dims_hd96_full_s1024_bf16' 'dims_hd80_full_s1024_bf16'
