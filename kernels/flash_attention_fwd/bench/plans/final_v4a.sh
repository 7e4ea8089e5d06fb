#!/usr/bin/env bash
# One device call (about 470 s of wall time; carry .device, with
# .device/variants/hopper_v4.cu, and .anchors): final.sh on hopper.cu as it
# is (v4a: the final run, then tests/fa_streams/streams_check.cu on it into
# $OUT/streams.txt), and the same check on v4's file into
# $OUT/streams_v4.txt, its library built while the final run goes. Expect
# v4a to match everywhere and v4 to mismatch (its calls share one queue
# counter and one partials buffer: NOTES.md v4a).
#   mkdir -p .device/variants &&
#   git show d82790c:kernels/flash_attention_fwd/hopper.cu > .device/variants/hopper_v4.cu
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/final_v4a.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_final}
mkdir -p "$OUT"
old=.device/variants/hopper_v4.cu
work=$(mktemp -d)
if [[ -f $old ]]; then
  streams_check_start "$work" v4 "$old"
  pid=$!
fi
timeout 520 bash kernels/flash_attention_fwd/bench/plans/final.sh
echo "== final.sh: exit $?"
if [[ -f $old ]]; then
  streams_check_report "$pid" "$work" v4 "$OUT/streams_v4.txt"
else
  echo "== streams_check v4: no $old"
fi
