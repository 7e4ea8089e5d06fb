#!/usr/bin/env bash
# One device call (about 330 s from cold; carry .device with
# .device/variants/hopper_v4.cu, and .anchors for the timeline's FA3): the
# kernel's scratch per call (CallScratch in hopper.cu: the split partials
# from a stream-ordered pool, the WGMMA queue per stream, a graph's own
# when captured) against v4's shared __device__ scratch.
#   1. tests/fa_streams/streams_check.cu on both libraries: calls on four streams at
#      once and a graph launched beside eager calls, each output against
#      the same call made alone, bit for bit. Expect v4 to mismatch (its
#      calls share one queue counter and one 32 MB partials buffer) and
#      the current file to match everywhere ($OUT/streams_v4.txt,
#      streams_new.txt; each also prints kseek_launch's host time per call).
#   2. GPU time: v4, new, v4 again, new again (variants.py, 10 samples)
#      on the shapes that use the scratch (long-split decode, the WGMMA
#      split keys of short queries over long keys, the mma.sync splits)
#      and on queue shapes of the grid, then the same decode shapes on
#      the timeline (spans, 20 samples). Expect new within the spread of
#      v4 and v4b (the kernels' registers and spills are v4's but for 4
#      kernels 2 registers fewer; the per-call pool allocation is host
#      work).
# .device/variants/hopper_v4.cu is v4's file:
#   mkdir -p .device/variants &&
#   git show d82790c:kernels/flash_attention_fwd/hopper.cu > .device/variants/hopper_v4.cu
# Without it only the current file is checked (step 1) and timed alone.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/streams.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
mkdir -p "${OUT:=/tmp/fa_variants}"
export OUT
old=.device/variants/hopper_v4.cu
work=$(mktemp -d)
streams_check_build "$work" || { echo "streams.sh: streams_check did not build"; exit 1; }
kernel_lib "$work" new "$cu" & pid=$!
[[ -f $old ]] && kernel_lib "$work" v4 "$old"
wait "$pid" || { echo "streams.sh: hopper.cu did not build"; tail -20 "$work/new.ptxas.txt"; exit 1; }
for name in v4 new; do
  [[ -f $work/$name.so ]] || { echo "== streams_check $name: not built (no $old)"; continue; }
  streams_check_on "$work" "$name" "$OUT/streams_$name.txt"
done

scenarios=('decode_b1_k32768_*' 'decode_b4_k16384_*' 'decode_q4_k16000_hd128*'
           'decode_q16_k8192_hd64*' 'prefill_q256_k16384_*' 'prefill_q512_k16384_*'
           'grid_hd128_causal_s2048_bf16' 'grid_hd64_full_s1024_bf16'
           'grid_hd256_causal_s4096_bf16')
timeline_of 'decode_b1_k32768_*' 'decode_b4_k16384_*' 'prefill_q256_k16384_*'
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-240}"
if [[ -f $old ]]; then
  variants="v4=$old;new=$cu;v4b=$old;new2=$cu"
else
  variants="new=$cu;new2=$cu"
fi
( run_plan "$variants" "${scenarios[@]}" ) 2>&1 | tee "$OUT/plan.log" | tail -60
