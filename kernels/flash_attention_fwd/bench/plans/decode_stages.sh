#!/usr/bin/env bash
# One device call (about 300 s): the decode kernel's long splits (GQA
# decode at head_dim <= 128 with long keys, one block of 4 warps per SM)
# with more bytes in flight, on an instance of their own
# (KSEEK_FA_DECODE_LONG_STAGES, KSEEK_FA_DECODE_LONG_WARPS, new; defaults
# 0 and 4: 3 stages per warp at head_dim 128, 4 at 64), and the combine
# behind the decode kernel a block per row from fewer splits
# (KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS, new, default 16), with the
# spread of equal builds on the 48 decode scenarios (decode_plan's 10 samples;
# decode_b4_k16384_gqa8_hd128 read 0.897-0.967x cuDNN in five final runs
# of the same code, and equal builds moved up to 12% on one decode shape
# after v3y):
#   def, def2        the default, twice
#   ls4              4 stages per warp (3 chunks of 16 keys in flight at
#                    head_dim 128; at 64 the default's count)
#   ls6              6 stages (5 in flight, 196 KB at head_dim 128)
#   lw8              8 warps, each with the default's ring (twice the
#                    bytes in flight per SM, and two warps per scheduler)
#   cr5              the combine behind the decode kernel a block per row
#                    from 5 splits, not 16 (KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS:
#                    b4_k16384_gqa8's 14 splits in one round of loads
#                    instead of four; its combine ends 3.0 us after the
#                    decode kernel, cuDNN's reduction 2.9)
# Then the timeline (every build, FA3, cuDNN) of two of v3y's lowest
# decode shapes against the best, b4_k16384_gqa8_hd128 and
# b64_k2048_gqa8_hd96, and of b1_k32768_gqa8_hd128 (52 long splits), and
# Nsight Compute on the decode kernel of def, ls6 and lw8 at
# decode_b4_k16384_gqa8_hd128 (DRAM throughput, stalls: what the 10 us
# that a line through b4_k16384's GQA 4 and 16 times leaves at zero bytes
# is made of; NOTES.md "After v3y, without the device").
# Run from the repository root (.anchors carried, for the timeline's FA3),
# with the Nsight Compute pages in one file so that $OUT holds 5 (a device
# call returns 8):
#   bash kernels/flash_attention_fwd/bench/plans/decode_stages.sh;
#   cd "$OUT" && tar -czf ncu_pages.tgz ncu_*.txt && rm -f ncu_*.txt builds.tgz timeline.json
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
scen=decode_b4_k16384_gqa8_hd128_bf16
timeline_of "$scen" 'decode_b64_k2048_gqa8_hd96_f16' 'decode_b1_k32768_gqa8_hd128_bf16'
export FA_NCU="def $scen AttentionDecode;ls6 $scen AttentionDecode;lw8 $scen AttentionDecode"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
ls="-DKSEEK_FA_DECODE_LONG_STAGES"
decode_plan "def=$cu;ls4=$cu $ls=4;ls6=$cu $ls=6;def2=$cu;lw8=$cu -DKSEEK_FA_DECODE_LONG_WARPS=8;cr5=$cu -DKSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS=5"
