#!/usr/bin/env bash
# One device call (about 520 s of wall time; carry .device, with
# .device/variants/hopper_v4a.cu, and .anchors): first why v4a's split-key
# calls failed under the harness (NOTES.md "v4a on the device"): kseek eval
# --no-timing of v4a's file on two split-key scenarios, in the sandbox (a
# failed call's message now carries what its process printed, such as
# "kseek sandbox: system call N refused") and with --unconfined, side by
# side, both into $OUT/v4a.txt (one file: a call brings back at most 8,
# and final.sh leaves 6 with the caller's run.log); then
# final.sh on hopper.cu as it is (v4b: its kseek eval must be all correct;
# streams_check must match everywhere).
#   mkdir -p .device/variants &&
#   git show 3c71081:kernels/flash_attention_fwd/hopper.cu > .device/variants/hopper_v4a.cu
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/final_v4b.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_final}
mkdir -p "$OUT"
old=.device/variants/hopper_v4a.cu
if [[ -f $old ]]; then
  fa=kernels/flash_attention_fwd
  scenarios=prefill_q256_k16384_hd128_full_bf16,decode_b1_k32768_gqa8_hd128_bf16
  work=$(mktemp -d)
  for mode in sandboxed unconfined; do
    flags=()
    [[ $mode == unconfined ]] && flags=(--unconfined)
    ( start=$(date +%s)
      LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/usr/local/cuda/bin:$PATH \
        timeout 150 .device/bin/kseek eval --local --task $fa --target sm_90a --no-timing \
        --scenarios "$scenarios" "${flags[@]}" "$old" > "$work/$mode.txt" 2>&1
      echo "== v4a $mode: kseek eval exit $? in $(( $(date +%s) - start )) s" >> "$work/$mode.txt" ) &
  done
  wait
  for mode in sandboxed unconfined; do
    echo "== v4a $mode"
    cat "$work/$mode.txt"
  done > "$OUT/v4a.txt"
  grep -v "^\[" "$OUT/v4a.txt" | tail -30
else
  echo "== v4a: no $old"
fi
timeout 540 bash kernels/flash_attention_fwd/bench/plans/final.sh
echo "== final.sh: exit $?"
