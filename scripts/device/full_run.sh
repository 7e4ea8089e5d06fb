#!/usr/bin/env bash
# One device call for everything that needs the GPU, in phases, each with a
# time limit so that one slow phase cannot starve the rest:
#   suite      scripts/device/gpu_suite.sh (GPU tests, softmax evaluations)
#   tolerance  flash_attention_fwd error measurement (bench/measure_tolerance.py)
#   anchor     flash_attention_fwd anchor benchmark (bench/run_anchor.sh;
#              its anchor.log and pad_sweep.log also come back as files)
#   extra      flash_attention_fwd checks beyond the task: the WGMMA probe
#              (hopper_wgmma_probe.cu, PASS/FAIL) and ANCHOR_KERNEL on
#              extra_scenarios.json (correctness only)
#   blackwell  on a compute capability 10.x GPU: the tcgen05 probe
#              (blackwell_tcgen05_probe.cu, PASS/FAIL), then kernels/flash_attention_fwd/
#              blackwell.cu through bench/run_anchor.sh: kseek eval --target
#              sm_100a on every scenario (and extra_scenarios.json), then the
#              anchor benchmark beside FlashAttention-4 (flash_attn.cute, when
#              python3 can import it) and cuDNN; BLACKWELL_EVAL_ARGS and
#              BLACKWELL_ANCHOR_ARGS set their flags. On any other GPU it says
#              so and skips
#   service    the relocatable bundle (deploy/bundle.sh, in dist/kernelseek-bundle)
#              as a service: kseek up (coordinator, host worker, one worker per
#              GPU), kseek workers, CUDA softmax evaluations through the
#              coordinator (several at once so that two GPUs share them), kseek
#              evals, kseek down. Runs with no LD_LIBRARY_PATH: the bundle must
#              find its own libraries.
# PHASES selects them (default "suite tolerance anchor blackwell"). Logs of each phase
# go to a folder of its own and are packed into $OUT/logs.tgz after every
# phase (the device returns few files); the summaries are printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/device-out}
work=$(mktemp -d)
mkdir -p "$out"
# What is printed also lands in $OUT/summary.txt, which comes back even when
# the device call runs out of time.
exec > >(tee "$out/summary.txt") 2>&1
pack() { tar -C "$work" -czf "$out/logs.tgz" . 2>/dev/null; }
dev=$PWD/.device
export LD_LIBRARY_PATH=$dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KSEEK_INCLUDE_DIR=$dev/include
# The compile cache stays out of the packed logs (libraries are large).
export KSEEK_CACHE_DIR=$(mktemp -d)
export PATH=/usr/local/cuda/bin:$PATH

for phase in ${PHASES:-suite tolerance anchor blackwell}; do
  start=$(date +%s)
  mkdir -p "$work/$phase"
  case $phase in
    suite)
      OUT=$work/suite timeout "${SUITE_TIMEOUT:-300}" bash scripts/device/gpu_suite.sh > "$work/suite/stdout.txt" 2>&1
      echo "== suite: exit $? in $(( $(date +%s) - start )) s"
      cat "$work/suite/repeatability.txt" "$work/suite/summary.txt" 2>/dev/null
      ;;
    tolerance)
      lib() { "$dev/bin/kseek" compile --target sm_90a --json "$1" |
              python3 -c 'import json,sys; print(json.load(sys.stdin)["library"])'; }
      ref=$(lib kernels/flash_attention_fwd/reference.cu)
      base=$(lib kernels/flash_attention_fwd/baseline.cu)
      (cd kernels/flash_attention_fwd/bench &&
       timeout "${TOLERANCE_TIMEOUT:-120}" python3 measure_tolerance.py --reference "$ref" --baseline "$base" \
         ${TOLERANCE_ARGS:---seeds 2 --max-tflop 0.1} --out "$work/tolerance/tolerance.json") \
         > "$work/tolerance/tolerance.log" 2>&1
      echo "== tolerance: exit $? in $(( $(date +%s) - start )) s"
      tail -30 "$work/tolerance/tolerance.log"
      ;;
    anchor)
      OUT=$work/anchor KSEEK_DEVICE_DIR=$dev timeout "${ANCHOR_TIMEOUT:-300}" \
        bash kernels/flash_attention_fwd/bench/run_anchor.sh ${ANCHOR_KERNEL:-} > "$work/anchor/stdout.txt" 2>&1
      echo "== anchor: exit $? in $(( $(date +%s) - start )) s"
      grep "^== " "$work/anchor/stdout.txt"
      # The anchor's table and the pad sweep come back whole beside the
      # packed logs; the summary shows the per-class tables (by events and
      # by the timeline), the lowest scenarios and the sweep's geomeans.
      for f in anchor.log pad_sweep.log; do
        [[ -f $work/anchor/$f ]] && cp "$work/anchor/$f" "$out/$f"
      done
      sed -n '/^geomean/,/^wrote/p' "$work/anchor/anchor.log" 2>/dev/null |
        grep -v '^spans: [0-9]* of ' | head -120
      sed -n '/^geomean TFLOP/,$p' "$work/anchor/pad_sweep.log" 2>/dev/null
      ;;
    extra)
      fa=kernels/flash_attention_fwd
      ( timeout 60 nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -o "$work/extra/wgmma_probe" $fa/hopper_wgmma_probe.cu &&
        timeout 30 "$work/extra/wgmma_probe" ) > "$work/extra/probe.log" 2>&1
      echo "== extra: wgmma probe exit $?"
      tail -20 "$work/extra/probe.log"
      timeout "${EXTRA_TIMEOUT:-120}" "$dev/bin/kseek" eval --task $fa --target sm_90a --no-timing \
        --scenarios $fa/extra_scenarios.json "${ANCHOR_KERNEL:-$fa/baseline.cu}" > "$work/extra/extra.txt" 2>&1
      echo "== extra: kseek eval extra_scenarios.json exit $? in $(( $(date +%s) - start )) s"
      cat "$work/extra/extra.txt"
      ;;
    blackwell)
      cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
      if [[ $cc != 10.* ]]; then
        echo "== blackwell: skipped: GPU 0 has compute capability ${cc:-unknown}; blackwell.cu needs 10.x (sm_100a)"
      else
        ( timeout 60 nvcc -gencode=arch=compute_100a,code=sm_100a -O2 -o "$work/blackwell/tcgen05_probe" \
            kernels/flash_attention_fwd/blackwell_tcgen05_probe.cu &&
          timeout 30 "$work/blackwell/tcgen05_probe" ) > "$work/blackwell/probe.log" 2>&1
        echo "== blackwell: tcgen05 probe exit $?"
        tail -6 "$work/blackwell/probe.log"
        fa4=--fa4
        if ! python3 -c 'import flash_attn.cute' > "$work/blackwell/fa4_import.log" 2>&1; then
          fa4=
          echo "== blackwell: flash_attn.cute not importable (fa4_import.log): FA4 not timed"
        fi
        OUT=$work/blackwell KSEEK_DEVICE_DIR=$dev FA_EXTRA=1 FA_EVAL_TIMEOUT=${BLACKWELL_EVAL_TIMEOUT:-600} \
          FA_EVAL_ARGS="${BLACKWELL_EVAL_ARGS:---max-samples 10 --max-seconds 1}" \
          FA_ANCHOR_ARGS="${BLACKWELL_ANCHOR_ARGS:---budget-s 0.2 --samples 10} $fa4" \
          timeout "${BLACKWELL_TIMEOUT:-1500}" bash kernels/flash_attention_fwd/bench/run_anchor.sh \
          kernels/flash_attention_fwd/blackwell.cu > "$work/blackwell/stdout.txt" 2>&1
        echo "== blackwell: exit $? in $(( $(date +%s) - start )) s"
        grep "^== " "$work/blackwell/stdout.txt"
        [[ -f $work/blackwell/anchor.log ]] && cp "$work/blackwell/anchor.log" "$out/blackwell_anchor.log"
        sed -n '/^geomean/,/^wrote/p' "$work/blackwell/anchor.log" 2>/dev/null | head -70
      fi
      ;;
    service)
      SERVICE_TIMEOUT=${SERVICE_TIMEOUT:-240} OUT=$work/service \
        timeout "${SERVICE_TIMEOUT:-240}" bash scripts/device/service_run.sh > "$work/service/stdout.txt" 2>&1
      echo "== service: exit $? in $(( $(date +%s) - start )) s"
      cat "$work/service/stdout.txt"
      ;;
  esac
  pack
done
