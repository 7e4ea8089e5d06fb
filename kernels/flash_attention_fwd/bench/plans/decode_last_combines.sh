#!/usr/bin/env bash
# One device call (about 200 s): the decode kernel's splits combined by
# the split block of each row group that counts itself last
# (KSEEK_FA_DECODE_LAST_COMBINES, new; no CombineSplits launch after it),
# on the 48 decode scenarios with decode_plan's 10 samples, and the
# timeline of the GQA decode shapes that have the longest combine tail
# (timeline_decode.sh: 3.8-7.0 us after the attention kernel):
#   def      the default (CombineSplits behind the decode kernel)
#   lc7      KSEEK_FA_DECODE_LAST_COMBINES=7 (every head dim)
#   def2     the default again
#   lc7b     KSEEK_FA_DECODE_LAST_COMBINES=7 again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_last_combines.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b4_k16384_gqa8_hd128_bf16' 'decode_b1_k32768_gqa8_hd128_bf16' \
  'decode_b16_k4096_gqa16_hd128_bf16'
decode_plan "def=$cu;lc7=$cu -DKSEEK_FA_DECODE_LAST_COMBINES=7;def2=$cu;lc7b=$cu -DKSEEK_FA_DECODE_LAST_COMBINES=7"
