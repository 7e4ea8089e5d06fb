#!/usr/bin/env bash
# One device call (about 250 s from cold; carry .anchors for the
# timeline's FA3): what a long-split decode call holds in the stream
# besides its kernels. Five builds in this load order, by CUDA events
# (variants.py, 10 samples) and on the GPU's timeline (timeline.py, 20
# samples), then timeline.py --offsets: per scenario and build the events'
# time less the span (us), into $OUT/offsets.txt.
#   def    the default, loaded first
#   pdl0   KSEEK_FA_PDL=0: the combine a plain launch after the attention
#          kernel, no programmatic dependent
#   def2   the default again
#   mend7  KSEEK_FA_MMA_PDL_END=7: the decode and mma.sync kernels' combine
#          a programmatic dependent launched only as their grid ends
#   def3   the default a third time
# Why (NOTES.md "After v4, without the device again"): in the calls after
# v3y (after_v3y.sh's decode table and timeline, same run), the events
# exceeded the span by 4.8-5.1 us for def on decode_b1_k32768_gqa8_hd128
# and b4_k16384_gqa8_hd128, but by 7.0-7.8 us for every later-loaded build
# with the early dependent combine (def2, ls4, lw8, cr5) and 4.4-5.1 for
# ls6, whose blocks left no room for the combine's early blocks; cuDNN
# 3.5-4.6; on decode_b64_k2048_gqa8_hd96 (one kernel, no combine) 4-5.5 for
# every backend. So the events' "first library" lead may be the early
# dependent launch's cost outside the kernels in later-loaded libraries.
# Expect: def2 and def3 as far above def as before on the long-split
# shapes; if pdl0 and mend7 sit near def there (and their spans grow by
# less than def2's offset exceeds def's), the early launch is what costs.
# The hd96 b64 shape is the control (no combine: equal offsets).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_offsets.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
mkdir -p "${OUT:=/tmp/fa_variants}"
export OUT
scenarios=('decode_b1_k32768_*' 'decode_b4_k16384_*' 'decode_b16_k4096_*'
           'decode_q4_k16000_hd128*' 'decode_b64_k2048_gqa8_hd96*')
timeline_of "${scenarios[@]}"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
( run_plan "def=$cu;pdl0=$cu -DKSEEK_FA_PDL=0;def2=$cu;mend7=$cu -DKSEEK_FA_MMA_PDL_END=7;def3=$cu" \
    "${scenarios[@]}" ) 2>&1 | tee "$OUT/plan.log"
python3 kernels/flash_attention_fwd/bench/timeline.py --offsets "$OUT/timeline.json" \
  "$OUT/variants.json" 2>&1 | tee "$OUT/offsets.txt"
