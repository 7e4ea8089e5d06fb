#!/usr/bin/env bash
# One device call (about 300 s from cold; carry .device and .anchors): the
# short calls on the GPU's timeline (bench/timeline.py: each kernel's start
# and end, 20 samples after a 1000 us pad), the default twice (def, def2:
# the first library loaded and a copy) beside FA3 (num_splits 1 and 0) and
# cuDNN, over the 48 decode, 20 many-short and 12 qlong scenarios, with
# timeline.py's span summary at the end (geomeans of the other backends'
# spans over each build's). Into $OUT: timeline.txt, timeline.json,
# plan.log.
# Why: these classes' calls take 5-100 us, where the anchor's CUDA events
# and the timeline have disagreed (v3z: events favour the first library
# loaded by up to 14% on long-split decode shapes, the timeline puts the
# two copies within 2%; decode_b4_k16384_gqa8_hd128 reads 0.93x cuDNN by
# events, 1.02x by span). The final run's decode 1.115x, many-short 1.593x
# and qlong 1.179x FA3 (bench/results/hopper_v4_h200.txt) are event
# figures; this gives their GPU-time counterparts and def against def2.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/short_calls_timeline.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_TIMELINE_TIMEOUT="${FA_TIMELINE_TIMEOUT:-480}"
mkdir -p "${OUT:=/tmp/fa_variants}"
export OUT
timeline_plan "def=$cu;def2=$cu" 'decode_*' 'many_short_*' 'qlong_*' 2>&1 | tee "$OUT/plan.log"
