#!/usr/bin/env bash
# One device call (about 180 s from cold with a fourth build, since
# removed): the decode kernel's narrow instances (KSEEK_FA_DECODE_NARROW,
# new, default 0): at head_dim 80/96 on D = 128 (and 136-192 on D = 256)
# S, P V and O's rescale over 3/4 of D, a quarter of the mma.sync steps
# and ldmatrix loads skipped. In v3y's run decode_b64_k2048_gqa8_hd96 took
# 94% of the time of its head_dim 128 twin for 75% of the bytes (FA3,
# rounding 96 up to 128: 89%), 0.922x FA3: so the decode kernel is not
# bound by bytes there. Prediction: +5-15% on the two head_dim 96 decode
# shapes (b64_k2048 runs 2 splits of 2 blocks per SM, short; b1_k32768
# the long splits), nothing on their head_dim 128 and 64 twins (the same
# code: they show the spread of equal builds), nor on the head_dim 256
# and the 32-row GQA group shapes (decode_q4_k16000_*_gqa8_causal).
#   def, def2   the default, twice
#   nr6         KSEEK_FA_DECODE_NARROW=6 (D = 128 and 256)
# 10 samples each, then the timeline (every build, FA3, cuDNN) of
# decode_b64_k2048_gqa8_hd96.
# Run from the repository root (.anchors carried, for the timeline's FA3):
#   bash kernels/flash_attention_fwd/bench/plans/decode_narrow.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b64_k2048_gqa8_hd96_f16'
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
run_plan "def=$cu;nr6=$cu -DKSEEK_FA_DECODE_NARROW=6;def2=$cu" \
  'decode_*gqa8_hd96*' 'decode_*gqa8_hd64*' 'decode_b64_k2048_gqa8_hd128*' \
  'decode_b1_k32768_gqa8_hd128*' 'decode_*gqa8_hd256*' 'decode_q4_k16000_*'
