#!/usr/bin/env bash
# One device call (about 200 s of wall time; carry .device, packed by
#   KSEEK_DEVICE_BINS="kseek" bash scripts/device/make_bundle.sh):
# head_dim 128's two-Q-buffer kernel (160-key tiles) for non-causal keys
# past 4096 (KSEEK_FA_HD128_FULL_Q2_UPTO). ragged_s4097_hd128_full trails
# FA3 (0.980 / 0.981 in v4c's final run, bench/results/hopper_v4c_h100.txt):
# one key past 4096 sends it to the one-Q-buffer kernel's 176-key tiles
# (24 tiles, 4224 keys computed), where 160-key ones compute 4160 and the
# next item's Q waits for no Q buffer. First kseek eval --no-timing of the
# file with the widest bound (u8192) in the harness's sandbox on the
# scenarios it moves ($OUT/q2_eval.txt); then side by side, beside cuDNN:
#   def    the default (4096)
#   u4224  up to 4224 keys (ragged_s4097, prefill_q333_k4097)
#   u8192  up to 8192 keys (also grid s8192, prefill_q1000_k8192)
#   def2   the default again (the spread)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_upto.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_q2_upto}
mkdir -p "$OUT"
fa=kernels/flash_attention_fwd
globs=('ragged_s4097_hd128_full_*' 'prefill_q333_k4097_hd128_full_*' 'prefill_q1000_k8192_hd128_full_*'
  'grid_hd128_full_s4096_*' 'grid_hd128_full_s8192_*')
scenarios=$(python3 $fa/bench/pick_scenarios.py "${globs[@]}") || exit 2
work=$(mktemp -d)
sed 's|^#ifndef KSEEK_FA_HD128_FULL_Q2_UPTO$|#define KSEEK_FA_HD128_FULL_Q2_UPTO 8192\n&|' $cu > "$work/u8192.cu"
grep -q "^#define KSEEK_FA_HD128_FULL_Q2_UPTO 8192" "$work/u8192.cu" || { echo "no switch to set" >&2; exit 2; }
start=$(date +%s)
LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/usr/local/cuda/bin:$PATH \
  timeout 200 .device/bin/kseek eval --local --task $fa --target sm_90a --no-timing \
  --scenario-timeout 10 --scenarios "$scenarios" "$work/u8192.cu" > "$work/eval.txt" 2>&1
echo "== kseek eval u8192: exit $? in $(( $(date +%s) - start )) s" > "$OUT/q2_eval.txt"
grep -E "correct|judge:|^[a-z_0-9~]+ +[a-z_]+ " "$work/eval.txt" | tail -20 >> "$OUT/q2_eval.txt"
cat "$OUT/q2_eval.txt"
up="$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-240}"
run_plan "def=$cu;u4224=$up=4224;u8192=$up=8192;def2=$cu" "${globs[@]}"
