#!/usr/bin/env bash
# One device call (about 120 s; carry .anchors): each kernel of a call on
# the GPU's timeline (bench/timeline.py through run_variants.sh's
# FA_TIMELINE) for the shapes lowest against the best of FA3 and cuDNN in
# v3x's final run (decode, 0.925-0.935x), beside FA3's and cuDNN's
# kernels on the same inputs. Builds:
#   def      the default
#   p0       KSEEK_FA_PDL=0 KSEEK_FA_PDL_END=0 (every combine a plain launch)
#   end15    KSEEK_FA_PDL_END=15 (the WGMMA kernels' combine at the grid's end)
# No timing table (FA_SCENARIOS=none); a 1000 us pad so that FA3's host
# work is hidden.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/timeline_decode.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_plan "def=$cu;p0=$cu -DKSEEK_FA_PDL=0 -DKSEEK_FA_PDL_END=0;end15=$cu -DKSEEK_FA_PDL_END=15" \
  'decode_q4_k16000_hd*_gqa8_causal_bf16' 'decode_b64_k2048_gqa8_hd96_f16' \
  'decode_b1_k32768_gqa*_hd128_bf16' 'decode_b16_k4096_gqa16_hd128_bf16'
