#!/usr/bin/env bash
# The anchor benchmark of flash_attention_fwd as one device command.
#
#   bash kernels/flash_attention_fwd/bench/run_anchor.sh [KERNEL.cu]
#
# Expects a relocatable build in .device/ at the repository root
# (.device/bin/kseek, .device/bin/kseek-runner, .device/lib/*.so,
# .device/include/kernelseek/abi.h) and python3 with torch. Compiles the
# candidate (default: the task's baseline.cu) with the harness's flags,
# evaluates it with `kseek eval --json` (correctness and the harness's own
# timing), then runs anchor.py beside FA3 (when .anchors/fa3 is carried:
# unpacked to /tmp/fa3 by its setup.sh), SDPA cuDNN and FA2 with the
# harness JSON for the timing comparison. Everything lands in $OUT
# (default /tmp/fa_anchor): compile.json, harness.json, anchor.json and
# the logs.
#
# Environment:
#   FA_SCENARIOS   "all" (default), "grid" (the FA3 grid), "prefix:P1,P2"
#                  (names starting with P1 or P2) or a comma list
#   FA_EVAL_ARGS   timing flags for kseek eval (default "--max-samples 10
#                  --max-seconds 1": the baseline is slow and the device time
#                  short)
#   FA_EVAL_TIMEOUT  seconds allowed for kseek eval (default 270); past it
#                  the anchor still runs, without the harness comparison
#   FA_ANCHOR_ARGS arguments for anchor.py (default "--budget-s 1": at most
#                  about a second of samples per kernel and scenario)
#   FA_HARNESS_JSON  a harness.json from an earlier run of the same candidate:
#                  kseek eval is skipped and that file is compared instead
#   FA_SKIP_ANCHOR=1 run kseek eval only (harness.json), not anchor.py
#   FA_EVAL_PREFIXES  a comma list of name prefixes (e.g. decode_,qlong_):
#                  kseek eval only on the scenarios whose names start with
#                  one of them (the anchor still runs on FA_SCENARIOS)
#   FA_EXTRA=1     also kseek eval --no-timing on extra_scenarios.json
#                  (extra.txt)
#   FA_PAD_SWEEP   a comma list of pads in us (e.g. 0,100,300,1000): after
#                  the anchor, anchor.py --pad-sweep on FA_SWEEP_SCENARIOS
#                  (a comma list; default a few short and long shapes):
#                  pad_sweep.json, pad_sweep.log
#   FA3_ANCHOR_DIR the FA3 anchor folder (default .anchors/fa3 at the
#                  repository root; absent: FA3 is not timed)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
TASK="$ROOT/kernels/flash_attention_fwd"
DEV="${KSEEK_DEVICE_DIR:-$ROOT/.device}"
OUT="${OUT:-/tmp/fa_anchor}"
KERNEL="$(realpath "${1:-$TASK/baseline.cu}")"
SUBSET="${FA_SCENARIOS:-all}"
read -r -a EVAL_TIMING <<< "${FA_EVAL_ARGS:---max-samples 10 --max-seconds 1}"
read -r -a ANCHOR_EXTRA <<< "${FA_ANCHOR_ARGS:---budget-s 1}"
mkdir -p "$OUT"

export KSEEK_INCLUDE_DIR="$DEV/include"
export LD_LIBRARY_PATH="$DEV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KSEEK_CACHE_DIR="${KSEEK_CACHE_DIR:-/tmp/fa_anchor_cache}"

case "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)" in
  9.*) TARGET=sm_90a ;;
  10.*) TARGET=sm_100a ;;
  *) echo "run_anchor.sh: no sm_90 or sm_100 device" >&2; exit 2 ;;
esac

case "$SUBSET" in
  all) EVAL_SCEN=(); ANCHOR_SCEN=() ;;
  grid)
    NAMES="$(python3 -c 'import json,sys
print(",".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]
               if s["name"].startswith("grid_")))' "$TASK/task.json")"
    EVAL_SCEN=(--scenarios "$NAMES"); ANCHOR_SCEN=(--grid-only) ;;
  prefix:*)
    NAMES="$(python3 -c 'import json,sys
pre=tuple(sys.argv[2].split(","))
print(",".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]
               if s["name"].startswith(pre)))' "$TASK/task.json" "${SUBSET#prefix:}")"
    EVAL_SCEN=(--scenarios "$NAMES"); ANCHOR_SCEN=(--scenarios "$NAMES") ;;
  *) EVAL_SCEN=(--scenarios "$SUBSET"); ANCHOR_SCEN=(--scenarios "$SUBSET") ;;
esac

if [[ -n "${FA_EVAL_PREFIXES:-}" ]]; then
  EVAL_SCEN=(--scenarios "$(python3 -c 'import json,sys
pre=tuple(sys.argv[2].split(","))
print(",".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]
               if s["name"].startswith(pre)))' "$TASK/task.json" "$FA_EVAL_PREFIXES")")
fi
echo "== target $TARGET, kernel $KERNEL, scenarios $SUBSET" | tee "$OUT/run.log"
FA3_DIR="${FA3_ANCHOR_DIR:-$ROOT/.anchors/fa3}"
if [[ -f "$FA3_DIR/setup.sh" ]]; then
  if bash "$FA3_DIR/setup.sh" /tmp/fa3 > "$OUT/fa3_setup.log" 2>&1; then
    export FA3_HOPPER=/tmp/fa3/fa/hopper
    echo "== FA3 from $FA3_DIR ready" | tee -a "$OUT/run.log"
  else
    echo "== FA3 setup failed (fa3_setup.log): FA3 not timed" | tee -a "$OUT/run.log"
  fi
fi
"$DEV/bin/kseek" compile --target "$TARGET" --json "$KERNEL" \
  > "$OUT/compile.json" 2> "$OUT/compile.log"
LIB="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["library"])' \
  "$OUT/compile.json")"
echo "== library $LIB" | tee -a "$OUT/run.log"

HARNESS_ARGS=()
if [[ -n "${FA_HARNESS_JSON:-}" ]]; then
  cp "$FA_HARNESS_JSON" "$OUT/harness.json"
  echo "== kseek eval skipped: harness timing from $FA_HARNESS_JSON" | tee -a "$OUT/run.log"
else
  start=$(date +%s)
  if timeout "${FA_EVAL_TIMEOUT:-270}" "$DEV/bin/kseek" eval --task "$TASK" \
      --target "$TARGET" --json --progress lines "${EVAL_TIMING[@]}" "${EVAL_SCEN[@]}" "$KERNEL" \
      > "$OUT/harness.json" 2> "$OUT/harness.log"; then
    echo "== kseek eval: all correct ($(( $(date +%s) - start )) s)" | tee -a "$OUT/run.log"
  else
    echo "== kseek eval exited $? ($(( $(date +%s) - start )) s); see harness.log" \
      | tee -a "$OUT/run.log"
  fi
fi
if [[ "${FA_EXTRA:-0}" == 1 ]]; then
  start=$(date +%s)
  rc=0
  timeout "${FA_EVAL_TIMEOUT:-270}" "$DEV/bin/kseek" eval --task "$TASK" --target "$TARGET" \
    --no-timing --scenario-timeout 10 --scenarios "$TASK/extra_scenarios.json" "$KERNEL" \
    > "$OUT/extra.txt" 2>&1 || rc=$?
  echo "== kseek eval extra_scenarios.json exit $rc ($(( $(date +%s) - start )) s)" | tee -a "$OUT/run.log"
  tail -3 "$OUT/extra.txt"
fi
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/harness.json" 2>/dev/null; then
  HARNESS_ARGS=(--harness-json "$OUT/harness.json")
fi
[[ "${FA_SKIP_ANCHOR:-0}" == 1 ]] && exit 0

cd "$TASK/bench"
python3 anchor.py --lib "$LIB" "${ANCHOR_SCEN[@]}" "${HARNESS_ARGS[@]}" \
  --out "$OUT/anchor.json" "${ANCHOR_EXTRA[@]}" 2>&1 | tee "$OUT/anchor.log"
if [[ -n "${FA_PAD_SWEEP:-}" ]]; then
  SWEEP="${FA_SWEEP_SCENARIOS:-grid_hd128_full_s512_bf16,grid_hd64_causal_s1024_f16,grid_hd128_full_s16384_bf16,decode_q1_k16384_hd128_full_f16,decode_b1_k32768_gqa8_hd128_bf16,many_short_b512_s32_hd128_full_f16,qlong_q128_k1_hd64_causal_bf16,gqa4_hd96_full_s2048_bf16}"
  python3 anchor.py --lib "$LIB" --scenarios "$SWEEP" --pad-sweep "$FA_PAD_SWEEP" \
    --out "$OUT/pad_sweep.json" "${ANCHOR_EXTRA[@]}" 2>&1 | tee "$OUT/pad_sweep.log"
fi
