#!/usr/bin/env bash
# One device call (about 330 s of wall time; carry .device and .anchors),
# for a default too new for final.sh's budget: kseek eval of hopper.cu as
# it is on every scenario and extra_scenarios.json (correctness only, as
# final.sh's) into $OUT/eval, then the anchor on the FA3 grid beside FA3
# and cuDNN (the grid evaluated again without timing first, as
# run_anchor.sh does) into $OUT/grid. The correctness comes first, so that
# it comes back if the anchor runs out of time.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/eval_and_grid.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
out=${OUT:-/tmp/fa_eval_grid}
cu=kernels/flash_attention_fwd/hopper.cu
OUT=$out/eval PHASES=anchor ANCHOR_KERNEL=$cu ANCHOR_TIMEOUT=240 FA_EVAL_TIMEOUT=220 \
  FA_SKIP_ANCHOR=1 FA_EXTRA=1 FA_EVAL_ARGS="--no-timing --scenario-timeout 10" \
  bash scripts/device/full_run.sh > "$out/eval.log" 2>&1
grep -E '^== kseek eval' "$out/eval.log"
OUT=$out/grid PHASES=anchor ANCHOR_KERNEL=$cu ANCHOR_TIMEOUT=200 FA_EVAL_TIMEOUT=100 \
  FA_SCENARIOS=grid FA_EVAL_ARGS="--no-timing --scenario-timeout 10" \
  FA_ANCHOR_ARGS="--budget-s 0.15 --samples 8" bash scripts/device/full_run.sh \
  > "$out/grid.log" 2>&1
tail -45 "$out/grid.log"
