#!/usr/bin/env bash
# One device call (about 150 s from cold): O staged in the last key tile's
# V on head_dim 128's 160-key two-Q-buffer tiles (KSEEK_FA_TMA_IN_V bit 2),
# which have no room for the TMA stores' own buffers and so store O in
# 16-byte stores since 160 became the default (v3r), on every non-causal
# head_dim 128 scenario but decode:
#   def      the default (v3r)
#   iv       KSEEK_FA_TMA_IN_V=14 (every 160-key item)
#   iv16     the same from 16 key tiles (the s4096 items, not s2048's 13)
#   def2     the default again (the spread of equal builds)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/in_v_160.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
iv="$cu -DKSEEK_FA_TMA_IN_V=14"
run_plan "def=$cu;iv=$iv;iv16=$iv -DKSEEK_FA_TMA_IN_V_MIN_TILES_128=16;def2=$cu" '[!dm]*hd128_full*'
