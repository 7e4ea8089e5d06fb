#!/usr/bin/env bash
# One device call (about 230 s from cold; carry .anchors): the L2
# promotion of the WGMMA kernel's TMA loads, beside the default.
# power.sh found every backend at the board's power limit (about 690 W)
# on the grid shapes, so speed there is energy per FLOP: the default
# spends 4.5% more than FA3 at grid_hd128_full_s1024 (1311 against 1255
# J/PFLOP, 1.56 against 1.64 GHz) while doing 1.4% more per cycle, and
# Nsight Compute shows it with 43% more L2 throughput (50.7% against
# 35.5% of peak) and 10% more DRAM cycles. FA3 loads K/V evict-last and Q
# evict-first; ours gives no hint outside the clusters. Builds:
#   def   the default
#   pr2   128-byte L2 promotion instead of 256 (KSEEK_FA_L2_PROMOTION=2)
# variants.py on the grid, gqa/mqa, ragged and prefill scenarios (L2
# flushed before every sample), then power.py (back to back, no flush) on
# the two grid shapes furthest under FA3.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cache_hint.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_POWER=grid_hd128_full_s1024_bf16,grid_hd256_full_s512_bf16
export FA_POWER_ARGS="--seconds 2"
run_plan "def=$cu;pr2=$cu -DKSEEK_FA_L2_PROMOTION=2" \
  'grid*' 'gqa*' 'mqa*' 'ragged*' 'prefill*'
