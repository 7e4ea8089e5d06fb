#!/usr/bin/env bash
# One device call (about 150 s of wall time; carry .device, packed by
#   KSEEK_DEVICE_BINS="kseek" bash scripts/device/make_bundle.sh
# with .device/variants/hopper_v4b.cu, v4b's file:
#   git show 88ed8e9:kernels/flash_attention_fwd/hopper.cu > .device/variants/hopper_v4b.cu):
# v4c (head_dim 193-256 with seqlen_k <= 64 on one 64-key tile per item)
# as committed: kseek eval --no-timing in the harness's sandbox on the
# scenarios it changes and the head_dim 256 ones beside them, and the
# extra scenarios ($OUT/v4c_eval.txt); then v4b against v4c side by side
# on those scenarios, beside cuDNN (variants.txt).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/v4c_check.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_v4c_check}
mkdir -p "$OUT"
fa=kernels/flash_attention_fwd
cu=$fa/hopper.cu
old=.device/variants/hopper_v4b.cu
[[ -f $old ]] || { echo "no $old" >&2; exit 2; }
scenarios=$(python3 $fa/bench/pick_scenarios.py 'many_short_*' 'qlong_*hd256*' \
  'grid_hd256_*_s512_*' 'ragged_s1000_hd256*') || exit 2
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
cache=$(mktemp -d)
work=$(mktemp -d)
# The harness's compile beside the builds' (the cache keeps it).
.device/bin/kseek compile --target sm_90a --task $fa --cache-dir "$cache" $cu \
  > "$work/compile.txt" 2>&1 &
compile_pid=$!
export FA_VARIANTS="v4b=$old;v4c=$cu" FA_SCENARIOS=$scenarios
export FA_VARIANT_ARGS="--samples 8 --budget-s 0.12" FA_VARIANTS_TIMEOUT=200
wait $compile_pid
echo "== kseek compile: exit $?"; tail -2 "$work/compile.txt"
{
  for set in task extra; do
    flags=(--scenarios "$scenarios")
    [[ $set == extra ]] && flags=(--scenarios $fa/extra_scenarios.json)
    start=$(date +%s)
    timeout 150 .device/bin/kseek eval --local --task $fa --target sm_90a --no-timing \
      --scenario-timeout 10 --cache-dir "$cache" "${flags[@]}" $cu > "$work/eval_$set.txt" 2>&1
    echo "== kseek eval v4c ($set scenarios): exit $? in $(( $(date +%s) - start )) s"
    grep -E "correct|judge:|^[a-z_0-9~]+ +[a-z_]+ " "$work/eval_$set.txt" | grep -v " ok " | tail -20
  done
} > "$OUT/v4c_eval.txt" 2>&1
cat "$OUT/v4c_eval.txt"
bash $fa/bench/run_variants.sh
