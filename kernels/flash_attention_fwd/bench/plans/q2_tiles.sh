#!/usr/bin/env bash
# One device call (about 170 s): head_dim 128 without causal masking up to
# 4096 keys (two Q buffers) on 144- or 160-key tiles where they pad the
# keys by at most 5% more than 128-key tiles (KSEEK_FA_HD128_Q2_BLOCK_N;
# s2048 and s4096 at 160, s4096 at 144), beside the default:
#   v3l    128-key tiles (0.96x FA3 at s1024-s4096 in v3l's final run)
#   q144   144-key tiles (with the TMA stores)
#   q160   160-key tiles (no room for the TMA stores)
# on the non-causal head_dim 128 grid, GQA/MQA, ragged, heads1 and qlong
# scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_tiles.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "v3l=$cu;q144=$cu -DKSEEK_FA_HD128_Q2_BLOCK_N=144;q160=$cu -DKSEEK_FA_HD128_Q2_BLOCK_N=160" \
  'grid_hd128_full_*' 'gqa*hd128_full*' 'mqa_hd128_full*' 'ragged_*hd128_full*' 'heads1_*hd128*' 'qlong_*hd128*full*'
