#!/usr/bin/env bash
# One device call (about 150 s from cold): version 1's narrow instances
# (KSEEK_FA_DECODE_NARROW now also swaps version 1, the mma.sync kernel,
# for its narrow twin where head_dim is at most 3/4 of D). decode_b64_k2048_gqa8_hd96
# (0.931x of the best in v3z's run) runs version 1: 128-row blocks holding
# its row group's 8 rows, S and P V over 128 columns of which 96 hold data
# (ptxas: 207 registers narrow, 231 full, no spills). Prediction: +5-10% on
# it, nothing elsewhere (the decode kernel's narrow instances measured
# 1.002x after v3y).
#   def, nr6, def2   the default, the switch, the default again: read nr6
#                    against def2 (CUDA events favour the first library
#                    loaded, NOTES.md v3z)
# 10 samples each on the GQA 8 decode shapes of head_dim 64-256, then the
# timeline (every build, FA3, cuDNN) of decode_b64_k2048_gqa8_hd96.
# Run from the repository root (.anchors carried, for the timeline's FA3):
#   bash kernels/flash_attention_fwd/bench/plans/decode_narrow_v1.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b64_k2048_gqa8_hd96_f16'
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
run_plan "def=$cu;nr6=$cu -DKSEEK_FA_DECODE_NARROW=6;def2=$cu" \
  'decode_*gqa8_hd96*' 'decode_*gqa8_hd64*' 'decode_b64_k2048_gqa8_hd128*' \
  'decode_b1_k32768_gqa8_hd128*' 'decode_*gqa8_hd256*'
