#!/usr/bin/env bash
# One device call (about 500 s from cold; carry .device, with
# .device/variants/hopper_v4a.cu, and .anchors): fa3_profile_and_flush.sh,
# and while its build runs, kseek eval --json of v4a's file on one
# split-key scenario in the harness's sandbox, whose full message names
# the system call the sandbox refused when v4a created its pool (the
# table cuts messages; NOTES.md "v4b on the device"). The eval's summary
# goes to stdout at the end (the caller's run.log: a call brings back at
# most 8 files and fa3_profile_and_flush.sh leaves 7).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/after_v4b.sh > $OUT/run.log 2>&1
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_after_v4b}
mkdir -p "$OUT"
old=.device/variants/hopper_v4a.cu
work=$(mktemp -d)
if [[ -f $old ]]; then
  ( LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/usr/local/cuda/bin:$PATH \
      timeout 200 .device/bin/kseek eval --local --task kernels/flash_attention_fwd --target sm_90a \
      --no-timing --json --scenarios decode_b1_k32768_gqa8_hd128_bf16 "$old" > "$work/v4a.json" 2> "$work/v4a.err"
    echo "exit $?" >> "$work/v4a.err" ) &
fi
bash kernels/flash_attention_fwd/bench/plans/fa3_profile_and_flush.sh
echo "== fa3_profile_and_flush.sh: exit $?"
wait
echo "== v4a sandboxed, kseek eval --json:"
grep -o '"[a-z_]*": *"[^"]*refused[^"]*"' "$work/v4a.json" 2>/dev/null | head -5
grep -o '"error": *"[^"]*"' "$work/v4a.json" 2>/dev/null | head -3
tail -c 1500 "$work/v4a.err" 2>/dev/null
head -c 3000 "$work/v4a.json" 2>/dev/null
