#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): where the
# WGMMA kernel's rounds spend their time on the rows that trail cuDNN and
# FA3 most, from the kernel's own stamps (KSEEK_FA_TRACE, bench/item_trace.py;
# written without a GPU, checked by the emulation's hopper_emu_trace).
#   tr    hopper.cu with -DKSEEK_FA_TRACE=1 (the diagnostic build)
#   def   the default
# First the two side by side beside cuDNN (what the stamps cost: tr against
# def), then item_trace.py on tr: per phase of consumer 0's round (wait for
# Q, for the first K, the first S, the rest through the last P V, O's
# stores), per key-tile count, the producer's waits, and the call's
# timeline (waiting / computing / storing / idle by 5% of the span): is the
# s512 rows' gap the rounds' waits for HBM, the ramp, or the tail?
# grid_hd128_full_s16384 (long, at the matmul's rate) is the control.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/trace_s512.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
item_trace_of tr \
  grid_hd256_causal_s512_bf16,grid_hd256_full_s512_bf16,grid_hd64_causal_s512_bf16,grid_hd128_causal_s512_bf16,ragged_s4097_hd128_full_bf16,grid_hd128_full_s16384_bf16
run_plan "tr=$cu -DKSEEK_FA_TRACE=1;def=$cu" \
  'grid_hd256_*_s512_bf16' 'grid_hd64_causal_s512_bf16' 'grid_hd128_causal_s512_bf16' \
  'ragged_s4097_hd128_full_bf16' 'grid_hd128_full_s16384_bf16'
