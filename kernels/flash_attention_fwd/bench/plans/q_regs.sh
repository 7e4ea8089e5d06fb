#!/usr/bin/env bash
# One device call (about 330 s from cold; carry .anchors for power.py's
# FA3): Q in the consumers' registers for S (KSEEK_FA_Q_REGS, new, off).
#   def  the default (v4h)
#   q2   -DKSEEK_FA_Q_REGS=2: head_dim 128 (and its narrow 80/96) on key
#        tiles of at most 128 keys (causal up to s4096, non-causal s512 and
#        s1024; the 160- and 176-key tiles keep Q in shared memory: with Q
#        in registers ptxas serialised their wgmma)
#   q3   -DKSEEK_FA_Q_REGS=3: also head_dim 64 where it runs two consumers
# The rows those instances take, a causal s16384 row as the control
# (176-key tiles, code unchanged), 10 samples each, interleaved beside
# cuDNN; then power.py (each build, FA3 and cuDNN back to back for 2.5 s
# under nvidia-smi: J/PFLOP and the SM clock) on two of the rows.
# Prediction: S reads a third less shared memory per tile and the next
# item's Q loads while this one computes (also with one Q buffer), so q2
# +1-2% on the short head_dim 128 rows (grid s512-s1024 and causal up to
# s4096) with less energy per FLOP; the control within the noise; q3 as
# q2 where head_dim 64 runs two consumers (causal s512), else equal.
# Kept only where it gains on its rows and loses nowhere.
# Run from the repository root (Q_REGS_SHORT=1: the short form below):
#   bash kernels/flash_attention_fwd/bench/plans/q_regs.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.15}"
# As measured: Q in registers in the one-Q-buffer instances too (the
# default since leaves those out, KSEEK_FA_Q_REGS_ONE_Q_BUFFER).
one="-DKSEEK_FA_Q_REGS_ONE_Q_BUFFER=1 -DKSEEK_FA_Q_REGS_MIN_N=0"
# def as measured: v4h, without Q in registers (v4i has it at head_dim 128).
v4h="$cu -DKSEEK_FA_Q_REGS=0"
if [[ -n ${Q_REGS_SHORT:-} ]]; then
  # A call with little device time left (about 200 s from cold): def and q2
  # on the head_dim 128 rows only, no power.py.
  run_plan "def=$v4h;q2=$cu -DKSEEK_FA_Q_REGS=2 $one" \
    'grid_hd128_*_s512_bf16' 'grid_hd128_*_s1024_bf16' 'grid_hd128_causal_s2048_bf16' \
    'grid_hd128_causal_s4096_bf16' 'grid_hd128_causal_s16384_bf16' 'gqa4_hd128_causal_s2048_bf16'
fi
export FA_POWER=grid_hd128_full_s1024_bf16,grid_hd128_causal_s4096_bf16
run_plan "def=$v4h;q2=$cu -DKSEEK_FA_Q_REGS=2 $one;q3=$cu -DKSEEK_FA_Q_REGS=3 $one" \
  'grid_hd128_*_s512_bf16' 'grid_hd128_*_s1024_bf16' 'grid_hd128_causal_s2048_bf16' \
  'grid_hd128_causal_s4096_*' 'grid_hd128_causal_s16384_bf16' 'grid_hd64_*_s512_bf16' \
  'grid_hd64_causal_s1024_bf16' 'dims_hd96_*_s1024_bf16' 'gqa4_hd128_causal_s2048_bf16' \
  'ragged_s1000_hd128_*_bf16' 'qlong_q1024_k512_hd128_causal_bf16' \
  'many_short_b256_s65_hd128_full_f16' 'heads1_b8_s2048_hd128_*'
