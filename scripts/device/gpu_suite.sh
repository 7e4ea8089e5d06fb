#!/usr/bin/env bash
# The GPU suite, run from the repository root on a machine with a Hopper GPU
# and the bundle in .device/ (scripts/device/make_bundle.sh made here):
#   1. every test executable (GPU tests run here instead of skipping),
#   2. the CUDA softmax fast kernel evaluated on sm_90a,
#   3. the CUDA softmax baseline evaluated twice in one run: per-scenario
#      medians compared (timing repeatability).
# Full logs go under $OUT (default ./gpu-suite-out); a summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/gpu-suite-out}
mkdir -p "$out"
source scripts/device/bundle_env.sh
bin=.device/bin
target=${KSEEK_GPU_TARGET:-sm_90a}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
summary=()
failed=0
for t in "$bin"/*_test; do
  name=$(basename "$t")
  # KSEEK_SUITE_SKIP: test executables to leave out, e.g. the compile-only
  # cuda_sources_compile_test that CI already runs.
  if [[ " ${KSEEK_SUITE_SKIP:-} " == *" $name "* ]]; then
    summary+=("$name: not run (KSEEK_SUITE_SKIP)")
    continue
  fi
  "$t" > "$out/$name.log" 2>&1
  rc=$?
  counts=$(grep -E "^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test" "$out/$name.log" | tr '\n' ' ')
  case $rc in
    0) summary+=("$name: passed  $counts") ;;
    77) summary+=("$name: SKIPPED  $counts") ;;
    *) summary+=("$name: FAILED (exit $rc)  $counts"); failed=$((failed + 1)) ;;
  esac
done

# KSEEK_EVAL_ARGS: extra flags for the softmax evaluations (timing budget).
read -r -a eval_args <<< "${KSEEK_EVAL_ARGS:-}"
eval_json() {  # eval_json OUTFILE KERNEL [flags...]
  local o=$1 k=$2
  shift 2
  "$bin/kseek" eval --task kernels/softmax --target "$target" --json "${eval_args[@]}" "$@" "$k" \
    > "$o" 2> "$o.err"
}
eval_json "$out/softmax_fast.json" kernels/softmax/fast.cu
summary+=("kseek eval softmax fast.cu: exit $?")
"$bin/kseek" eval --task kernels/softmax --target "$target" "${eval_args[@]}" kernels/softmax/fast.cu \
  > "$out/softmax_fast.txt" 2>&1
eval_json "$out/softmax_baseline_1.json" kernels/softmax/baseline.cu --seed 11
summary+=("kseek eval softmax baseline.cu (1): exit $?")
eval_json "$out/softmax_baseline_2.json" kernels/softmax/baseline.cu --seed 12
summary+=("kseek eval softmax baseline.cu (2): exit $?")
python3 scripts/device/compare_medians.py "$out/softmax_baseline_1.json" "$out/softmax_baseline_2.json" \
  > "$out/repeatability.txt" 2>&1

cat "$out/softmax_fast.txt"
echo
cat "$out/repeatability.txt"
echo
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
exit $((failed > 0))
