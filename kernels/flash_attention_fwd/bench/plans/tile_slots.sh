#!/usr/bin/env bash
# One device call (about 250 s from cold): head_dim 128's two-Q-buffer
# kernel with its K/V in a ring of three tile slots
# (KSEEK_FA_HD128_Q2_TILE_SLOTS=3) instead of two stages, which leaves room
# for 176-key tiles (FA3's tile) beside the second Q buffer: 176 keys pad
# at most 5% more than 128 at s512-s4096, so the grid's s512 and s1024
# rows run 3 and 6 tiles of 176 keys where they ran 4 and 8 of 128, and
# s2048-s4096 run 176 in place of 160. On every head_dim 128 scenario
# without causal masking (s8192 and longer take the one-Q-buffer kernel:
# unchanged, the spread of equal code), then item_costs.py (fixed cost and
# cost per 128 keys on 2,048 items of 256 queries):
#   def      the default (two stages; 160-key tiles where they pad <= 5%)
#   r176     three tile slots, 176-key tiles
#   r160     three tile slots, 160-key tiles (stages against slots alone;
#            with room for the TMA stores' buffers)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tile_slots.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_ITEM_COSTS=256,512,1056,2112
export FA_ITEM_COSTS_ARGS="--head-dims 128 --samples 20"
slots="-DKSEEK_FA_HD128_Q2_TILE_SLOTS=3"
run_plan "def=$cu;r176=$cu $slots -DKSEEK_FA_HD128_Q2_BLOCK_N=176;r160=$cu $slots;def2=$cu" \
  '[!dm]*hd128*full*'
