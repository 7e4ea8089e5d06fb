#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): O staged by
# TMA in the Q buffer (KSEEK_FA_O_IN_Q) for the D = 256 kernel's items
# shorter than 32 key tiles, on every head_dim 256 scenario. The item trace
# (trace_s512.sh) measured O's stores from registers at 2.4 us of a 12-14 us
# round at s512 and the next item's Q at 1.0 us (median, causal): 3.4 us
# without GEMMs. Staged, the stores should take a fraction of that, but Q
# is released only once they have read it, so the next Q lands later.
# Prediction: +2-5% at s512-s1024 if the next Q's wait grows by less than
# the stores shrink, nothing from 32 tiles on (s2560 and longer: the
# split-loop instances keep O in V); v3n's O through the V stage did not
# move s512, so a loss is possible.
#   def   the default
#   oq    KSEEK_FA_O_IN_Q=4 (the D = 256 kernel)
#   tr    oq in the trace build: item_trace.py on head_dim 256 s512, beside
#         trace_s512.sh's phases for the default
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/o_in_q.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_ITEM_TRACE=grid_hd256_causal_s512_bf16,grid_hd256_full_s512_bf16
export FA_ITEM_TRACE_BUILD=tr
run_plan "def=$cu;oq=$cu -DKSEEK_FA_O_IN_Q=4;tr=$cu -DKSEEK_FA_O_IN_Q=4 -DKSEEK_FA_TRACE=1" '*hd256*'
