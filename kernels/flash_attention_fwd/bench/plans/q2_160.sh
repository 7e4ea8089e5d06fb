#!/usr/bin/env bash
# One device call (about 150 s from cold): 160-key tiles on head_dim 128's
# two-Q-buffer kernel (KSEEK_FA_HD128_Q2_BLOCK_N=160, where they pad at
# most 5% more than 128-key tiles: s2048 and s4096 of the grid, in place
# of 128 and 144 keys), since clocks.py found FA3's lead at s1024-s2048 to
# be cycles at the boost clock (fewer, longer tiles: less fixed latency per
# key), on every non-causal head_dim 128 scenario but decode:
#   def      the default
#   q160     KSEEK_FA_HD128_Q2_BLOCK_N=160 (224 KB: O in 16-byte stores)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_160.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;q160=$cu -DKSEEK_FA_HD128_Q2_BLOCK_N=160" '[!dm]*hd128_full*'
