#!/usr/bin/env bash
# One device call (about 280 s), after tma_in_v.sh (v3n's second call:
# O's TMA stores staged in the last tile's V, tv, 0.992x on head_dim
# 160-256 but +1-2% from 3,000 keys; with the items located by
# multiplications, tvfl, 1.000x and +1.2% at grid s512): the same beside
# the default, by item length and with the release deferred:
#   def      the default build
#   tv32     KSEEK_FA_TMA_IN_V=12, only items of 32 or more key tiles
#            (KSEEK_FA_TMA_IN_V_MIN_TILES, default 32)
#   tv32fl   and KSEEK_FA_FAST_LOCATE=7 (head_dim 256 too)
#   fl       KSEEK_FA_FAST_LOCATE=7 alone (v3l's fl256)
#   tvd      every item's O that way, each warp releasing the V stage
#            only once the next item's first S is done
#            (KSEEK_FA_TMA_IN_V_DEFER=1, KSEEK_FA_TMA_IN_V_MIN_TILES=0)
#   tvd32fl  the deferred release from 32 tiles, with KSEEK_FA_FAST_LOCATE=7
# on every scenario at head_dim 160, 192 and 256 but decode.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tma_in_v2.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-300}"
tv="$cu -DKSEEK_FA_TMA_IN_V=12"
fl="-DKSEEK_FA_FAST_LOCATE=7"
run_plan "def=$cu;tv32=$tv;tv32fl=$tv $fl;fl=$cu $fl;tvd=$tv -DKSEEK_FA_TMA_IN_V_DEFER=1 -DKSEEK_FA_TMA_IN_V_MIN_TILES=0;tvd32fl=$tv -DKSEEK_FA_TMA_IN_V_DEFER=1 $fl" \
  '[!d]*hd256*' '[!d]*hd192*' '[!d]*hd160*' 'dims_*hd192*' 'dims_*hd160*'
