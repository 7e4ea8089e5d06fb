#!/usr/bin/env bash
# One device call (about 250 s): the combine behind the decode kernel with
# more splits' loads in flight per warp (KSEEK_FA_COMBINE_IN_FLIGHT, new;
# timeline_decode.sh: its combine ends 3.8-7.0 us after the attention
# kernel, cuDNN's reduction 3.6-5.6; a block per row of 8 warps walks up
# to 128 splits, 16 a warp, four at a time), on the 48 decode scenarios
# with decode_plan's 10 samples and the decode timeline:
#   def      the default (4)
#   if8      KSEEK_FA_COMBINE_IN_FLIGHT=8
#   if16     KSEEK_FA_COMBINE_IN_FLIGHT=16
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/combine_in_flight.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_q4_k16000_hd*_gqa8_causal_bf16' 'decode_b1_k32768_gqa*_hd128_bf16' \
  'decode_b16_k4096_gqa16_hd128_bf16'
decode_plan "def=$cu;if8=$cu -DKSEEK_FA_COMBINE_IN_FLIGHT=8;if16=$cu -DKSEEK_FA_COMBINE_IN_FLIGHT=16;def2=$cu"
