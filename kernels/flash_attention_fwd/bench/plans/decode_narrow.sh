#!/usr/bin/env bash
# One device call (about 180 s from cold), two decode questions:
# 1. The decode kernel's narrow instances (KSEEK_FA_DECODE_NARROW, new,
#    default 0): at head_dim 80/96 on D = 128 (and 136-192 on D = 256) S,
#    P V and O's rescale over 3/4 of D, a quarter of the mma.sync steps and
#    ldmatrix loads skipped. In v3y's run decode_b64_k2048_gqa8_hd96 took
#    94% of the time of its head_dim 128 twin for 75% of the bytes (FA3,
#    rounding 96 up to 128: 89%), 0.922x FA3: so the decode kernel is not
#    bound by bytes there. Prediction: +5-15% on the two head_dim 96
#    decode shapes (b64_k2048 runs 2 splits of 2 blocks per SM, short;
#    b1_k32768 the long splits), nothing on their head_dim 128 and 64
#    twins (the same code: they show the spread of equal builds).
# 2. The 32-row GQA groups (decode_q4_k16000_*_gqa8_causal: 4 queries x 8
#    heads; 0.926x and 0.937x cuDNN at head_dim 128 and 256 in v3y's run)
#    on the decode kernel's long splits with two row tiles per warp and 8
#    warps per block (hopper_emu_long's build: KSEEK_FA_DECODE_LONG_WARPS=8,
#    KSEEK_FA_DECODE_TWO_TILES=3, KSEEK_FA_DECODE2_GQA_MIN_SPLITS=2; ptxas
#    255 registers at head_dim 128, no spills, one block per SM). By default
#    head_dim 128 takes version 1 there: 128-row blocks, one per SM, of
#    which the 2 warps that hold the group's 32 rows compute; the two-tile
#    long splits with 4 warps measured 0.93x of that (v3m). K/V in flight
#    per SM: version 1 64 KB (two of three 64-key stages), the 4-warp
#    two-tile blocks 64 KB, lw8t 128 KB. Prediction: 0.95-1.15x at 128;
#    head_dim 256 has no two-tile instance (the same code); 64 moves from
#    4 warps to 8.
#   def, def2   the default, twice
#   nr6         KSEEK_FA_DECODE_NARROW=6 (D = 128 and 256)
#   lw8t        the long splits on 8 warps, two row tiles at 64 and 128, from
#               two splits of version 1 (the 16-row groups' long splits on
#               8 warps too: decode_stages.sh's lw8)
# 10 samples each, then the timeline (every build, FA3, cuDNN) of
# decode_b64_k2048_gqa8_hd96.
# Run from the repository root (.anchors carried, for the timeline's FA3):
#   bash kernels/flash_attention_fwd/bench/plans/decode_narrow.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b64_k2048_gqa8_hd96_f16'
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
lw8t="-DKSEEK_FA_DECODE_LONG_WARPS=8 -DKSEEK_FA_DECODE_TWO_TILES=3 -DKSEEK_FA_DECODE2_GQA_MIN_SPLITS=2"
run_plan "def=$cu;nr6=$cu -DKSEEK_FA_DECODE_NARROW=6;lw8t=$cu $lw8t;def2=$cu" \
  'decode_*gqa8_hd96*' 'decode_*gqa8_hd64*' 'decode_b64_k2048_gqa8_hd128*' \
  'decode_b1_k32768_gqa8_hd128*' 'decode_*gqa8_hd256*' 'decode_q4_k16000_*'
