#!/usr/bin/env bash
# One device call (about 150 s from cold): the narrow instances
# (KSEEK_FA_DECODE_NARROW, default 6 since v4: at head_dim 80/96 on
# D = 128 and 136-192 on D = 256, the decode kernel and version 1, the
# mma.sync kernel, compute S, P V and O's rescale over 3/4 of D) against
# the full-width instances, v3z's. Measured before they became the
# default (bench/results/hopper_after_v3y_variants_h200.txt, calls 3 and
# 4): the decode kernel's 1.002x; version 1's +5% on
# decode_b64_k2048_gqa8_hd96 (38.0 us on the GPU's timeline against
# 39.8-40.2). Expect the head_dim 96 shapes to gain and their head_dim 64,
# 128 and 256 twins (the same code) to show the spread of equal builds.
#   def, nr0, def2   the default, the switch off, the default again: read
#                    nr0 against def2 (CUDA events favour the first
#                    library loaded, NOTES.md v3z)
# 10 samples each on the GQA 8 decode shapes of head_dim 64-256, then the
# timeline (every build, FA3, cuDNN) of decode_b64_k2048_gqa8_hd96.
# Run from the repository root (.anchors carried, for the timeline's FA3):
#   bash kernels/flash_attention_fwd/bench/plans/decode_narrow.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'decode_b64_k2048_gqa8_hd96_f16'
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
run_plan "def=$cu;nr0=$cu -DKSEEK_FA_DECODE_NARROW=0;def2=$cu" \
  'decode_*gqa8_hd96*' 'decode_*gqa8_hd64*' 'decode_b64_k2048_gqa8_hd128*' \
  'decode_b1_k32768_gqa8_hd128*' 'decode_*gqa8_hd256*'
