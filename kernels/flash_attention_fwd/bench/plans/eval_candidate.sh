#!/usr/bin/env bash
# One device call (about 300 s of wall time; carry .device): kseek eval of
# hopper.cu on every scenario and extra_scenarios.json (correctness only,
# as final.sh's first step), as it is or, with FA_DEFINES (e.g.
# "KSEEK_FA_TAIL_SPLIT=6"), as a copy with those switches set by #define
# lines at its top (run_plan.sh candidate_kernel): a candidate default
# checked before its final run. final.sh takes FA_DEFINES too, and its
# final run includes the same eval: where both fit one call's 600 s (v4f:
# about 360 s), a final run with FA_DEFINES makes this call unneeded.
# The compile alone takes about 2 minutes with KSEEK_FA_TAIL_SPLIT=6 on the
# H100's host, the evaluation about 130 s more, hence the limits.
# Log: $OUT/eval.log; the phase's logs in $OUT/eval/logs.tgz.
# Run from the repository root:
#   FA_DEFINES="KSEEK_FA_TAIL_SPLIT=6" bash kernels/flash_attention_fwd/bench/plans/eval_candidate.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
out=${OUT:-/tmp/fa_eval_candidate}
mkdir -p "$out"
source kernels/flash_attention_fwd/bench/plans/run_plan.sh
cu=$(candidate_kernel "$(mktemp -d)") || exit 2
[[ -n ${FA_DEFINES:-} ]] && echo "== the candidate: $FA_DEFINES"
OUT=$out/eval PHASES=anchor ANCHOR_KERNEL=$cu ANCHOR_TIMEOUT=420 FA_EVAL_TIMEOUT=380 \
  FA_SKIP_ANCHOR=1 FA_EXTRA=1 FA_EVAL_ARGS="--no-timing --scenario-timeout 10" \
  bash scripts/device/full_run.sh > "$out/eval.log" 2>&1
cat "$out/eval.log"
