#!/usr/bin/env bash
# One device call (about 280 s): O's TMA stores staged in the last key
# tile's V at the D = 256 and D = 192 kernels (KSEEK_FA_TMA_IN_V=12; v3n's
# first call: at grid_hd256_full_s512 our epilogue took 2,310 stall
# samples against FA3's 775, its 16-byte stores' quad shuffles and the
# registers they hold waiting on the LSU's queue), beside the default:
#   def    the default build
#   tv     KSEEK_FA_TMA_IN_V=12
#   tvfe   and the MUFU epilogue at 256 and D = 192 too
#          (KSEEK_FA_FAST_EPILOGUE=15; 1-4% slower at 256 in v3k, with the
#          old stores)
#   tvfl   and items located by multiplications at 256
#          (KSEEK_FA_FAST_LOCATE=7; v3l's call 2: many-short +4-14%,
#          s4096-16384 3-6% slower with the old stores)
# on every scenario at head_dim 160, 192 and 256 but decode (the mma.sync
# kernel's).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tma_in_v.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-300}"
tv="$cu -DKSEEK_FA_TMA_IN_V=12"
run_plan "def=$cu;tv=$tv;tvfe=$tv -DKSEEK_FA_FAST_EPILOGUE=15;tvfl=$tv -DKSEEK_FA_FAST_LOCATE=7" \
  '[!d]*hd256*' '[!d]*hd192*' '[!d]*hd160*' 'dims_*hd192*' 'dims_*hd160*'
