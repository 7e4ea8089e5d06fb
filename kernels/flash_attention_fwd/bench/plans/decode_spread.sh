#!/usr/bin/env bash
# One device call (about 150 s): how far equal builds move on the 48
# decode scenarios in one call (decode_plan's 10 samples; NOTES.md after
# v3y: decode_b4_k16384_gqa8_hd128 read 0.897-0.967x cuDNN in five final
# runs of the same code, and equal builds moved up to 12% on one decode
# shape), with the timeline of the lowest shapes against the best:
#   def, def2, def3   the default, three times
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_spread.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b4_k16384_gqa8_hd128_bf16' 'decode_b64_k2048_gqa8_hd96_f16' \
  'decode_b1_k32768_gqa1_hd128_bf16'
decode_plan "def=$cu;def2=$cu;def3=$cu"
