#!/usr/bin/env bash
# One device command for the decode kernel's work: builds side by side on
# scenarios chosen by name prefix (run_variants.sh), then kseek eval of one
# kernel (correctness, fresh seed, no timing) on scenarios chosen the same
# way and on extra_scenarios.json (run_anchor.sh with FA_SKIP_ANCHOR=1).
#
#   FA_VARIANTS="old=.device/variants/hopper_v3e.cu;new=kernels/flash_attention_fwd/hopper.cu" \
#   DECODE_TIME_PREFIXES=decode_,many_short_b2048_s8 DECODE_EVAL_PREFIXES=decode_ DECODE_ANCHOR=1 \
#     bash kernels/flash_attention_fwd/bench/run_decode.sh
#
# Environment: FA_VARIANTS as run_variants.sh takes it (unset: no timing);
# DECODE_TIME_PREFIXES / DECODE_EVAL_PREFIXES (comma lists of scenario name
# prefixes; DECODE_EVAL_PREFIXES unset: no eval); DECODE_EVAL_KERNEL
# (default hopper.cu); DECODE_ANCHOR=1: after the eval, anchor.py on the
# same scenarios beside FA3 (when .anchors/fa3 is carried), cuDNN and FA2;
# DECODE_VARIANTS_TIMEOUT, DECODE_EVAL_TIMEOUT (seconds, default 200 each).
# Needs .device/ (kseek, kseek-runner, libraries) for the eval. Writes to
# $OUT: variants.txt, variants.json, builds.tgz, anchor.log, eval.tgz
# (run.log, harness.json, harness.log, extra.txt, anchor.json) and
# log.txt; the summaries are printed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
TASK="$ROOT/kernels/flash_attention_fwd"
OUT="${OUT:-/tmp/fa_decode}"
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
names() {
  python3 -c 'import json,sys
pre=tuple(sys.argv[2].split(","))
print(",".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]
               if s["name"].startswith(pre)))' "$TASK/task.json" "$1"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv

if [[ -n "${FA_VARIANTS:-}" ]]; then
  start=$(date +%s)
  FA_SCENARIOS="$(names "${DECODE_TIME_PREFIXES:-decode_}")" OUT="$OUT" \
    FA_VARIANTS_TIMEOUT="${DECODE_VARIANTS_TIMEOUT:-200}" \
    bash "$TASK/bench/run_variants.sh" > /dev/null 2>&1
  echo "== variants: exit $? in $(( $(date +%s) - start )) s"
  cat "$OUT/variants.txt" 2>/dev/null
fi

if [[ -n "${DECODE_EVAL_PREFIXES:-}" ]]; then
  start=$(date +%s)
  eval_dir=$(mktemp -d)
  OUT="$eval_dir" FA_SCENARIOS="$(names "$DECODE_EVAL_PREFIXES")" FA_EXTRA=1 \
    FA_SKIP_ANCHOR=$(( ${DECODE_ANCHOR:-0} == 1 ? 0 : 1 )) \
    FA_EVAL_TIMEOUT="${DECODE_EVAL_TIMEOUT:-200}" \
    FA_EVAL_ARGS="--no-timing --scenario-timeout 20" \
    FA_ANCHOR_ARGS="--budget-s 0.15 --samples 8" \
    bash "$TASK/bench/run_anchor.sh" "${DECODE_EVAL_KERNEL:-$TASK/hopper.cu}" > "$eval_dir/stdout.txt" 2>&1
  echo "== eval: exit $? in $(( $(date +%s) - start )) s"
  cat "$eval_dir/run.log"
  [[ -f $eval_dir/anchor.log ]] && cp "$eval_dir/anchor.log" "$OUT/anchor.log" &&
    sed -n '/^geomean/,/^wrote/p' "$eval_dir/anchor.log" | head -40
  python3 - "$eval_dir/harness.json" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("harness.json unreadable:", e)
    sys.exit(0)
rows = r.get("scenarios", [])
bad = [(s.get("name"), s.get("status")) for s in rows if s.get("status") != "ok"]
worst = max(rows, key=lambda s: s.get("rel_l2") or 0, default={})
print(f"kseek eval: {len(rows)} scenarios, {len(rows) - len(bad)} ok, "
      f"all_correct {r.get('all_correct')}, seed {r.get('seed')}; largest o rel_l2 "
      f"{worst.get('rel_l2')} ({worst.get('name')}); not ok: {bad}")
EOF
  tail -3 "$eval_dir/extra.txt" 2>/dev/null
  tar -C "$eval_dir" -czf "$OUT/eval.tgz" .
fi
