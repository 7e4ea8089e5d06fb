#!/usr/bin/env bash
# One device call (about 200 s from cold): head_dim 128's two-Q-buffer
# kernel on 160-key tiles with O staged in the last tile's V (the TMA
# buffers do not fit beside 160-key stages; KSEEK_FA_TMA_IN_V's bit 2)
# beside the default (144- or 128-key tiles with TMA buffers) and 160-key
# tiles with the 16-byte stores (v3m's q160: 0.992x):
#   def     the default build
#   q160    KSEEK_FA_HD128_Q2_BLOCK_N=160
#   q160v   and KSEEK_FA_TMA_IN_V=14 (every item: _MIN_TILES_128 0)
# on the non-causal head_dim 128 scenarios of q2_tiles.sh (160-key tiles
# where they pad the keys by at most 5% more than 128-key ones: the grid's
# s2048 and s4096, ragged s3001, ...).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q160_in_v.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
q160="$cu -DKSEEK_FA_HD128_Q2_BLOCK_N=160"
run_plan "def=$cu;q160=$q160;q160v=$q160 -DKSEEK_FA_TMA_IN_V=14" \
  'grid_hd128_full_*' 'gqa*hd128_full*' 'mqa_hd128_full*' 'ragged_*hd128_full*' 'heads1_*hd128*' 'qlong_*hd128*full*'
