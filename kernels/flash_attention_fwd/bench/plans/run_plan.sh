# Sourced by the plans. run_plan VARIANTS GLOB... times the builds of
# VARIANTS (bench/run_variants.sh's FA_VARIANTS) beside cuDNN on the
# scenarios that pick_scenarios.py takes for the globs, from the
# repository root, with the plans' sampling (FA_VARIANT_ARGS) and a
# timeout for variants.py (FA_VARIANTS_TIMEOUT) unless the caller set them.
# The kernel file, for the plans' FA_VARIANTS.
cu=kernels/flash_attention_fwd/hopper.cu
source "$(dirname "${BASH_SOURCE[0]}")/../switches.sh"
run_plan() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
  export FA_VARIANTS="$1"
  shift
  FA_SCENARIOS=$(python3 kernels/flash_attention_fwd/bench/pick_scenarios.py "$@") || exit 1
  export FA_SCENARIOS
  export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
  export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-540}"
  exec bash kernels/flash_attention_fwd/bench/run_variants.sh
}

# timeline_of GLOB...: the scenarios pick_scenarios.py takes for the globs
# as run_variants.sh's FA_TIMELINE (bench/timeline.py: each kernel of a
# call on the GPU's timeline), 20 samples after a 1000 us pad unless the
# caller set FA_TIMELINE_ARGS; then a plan's run_plan adds the timeline.
timeline_of() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
  FA_TIMELINE=$(python3 kernels/flash_attention_fwd/bench/pick_scenarios.py "$@") || exit 1
  export FA_TIMELINE
  export FA_TIMELINE_ARGS="${FA_TIMELINE_ARGS:---samples 20 --pad-us 1000}"
}

# item_trace_of BUILDS SCENARIOS [ARGS]: run_variants.sh's item trace
# (bench/item_trace.py) of SCENARIOS (a comma list) on each of BUILDS
# (comma-separated names of builds made with -DKSEEK_FA_TRACE=1), with
# item_trace.py's options ARGS (e.g. "--bins 10") where given; then a
# plan's run_plan adds the traces.
item_trace_of() {
  export FA_ITEM_TRACE_BUILD="$1" FA_ITEM_TRACE="$2"
  [[ -n ${3:-} ]] && export FA_ITEM_TRACE_ARGS="$3"
  return 0
}

# timeline_plan VARIANTS GLOB...: the builds of VARIANTS on the timeline of
# those scenarios beside FA3 and cuDNN, without a timing table.
timeline_plan() {
  local variants=$1
  shift
  timeline_of "$@"
  export FA_VARIANTS="$variants" FA_SCENARIOS=none
  exec bash kernels/flash_attention_fwd/bench/run_variants.sh
}

# decode_plan VARIANTS: run_plan on the 48 decode scenarios, with 10
# samples each (decode shapes move by up to 4% between runs) and a 300 s
# timeout, unless the caller set them (decode_two_tiles_128.sh).
decode_plan() {
  export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
  export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-300}"
  run_plan "$1" 'decode_*'
}

# run_profile VARIANTS NCU [FA3_SCENARIO]: Nsight Compute only (no timing
# table): bench/run_variants.sh's FA_NCU specs ("NAME SCENARIO [KERNEL]",
# ';'-separated) on the builds of VARIANTS, and FA3's forward kernel on
# FA3_SCENARIO where given (.anchors carried).
run_profile() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
  export FA_VARIANTS="$1" FA_NCU="$2" FA_SCENARIOS=none
  [[ -n ${3:-} ]] && export FA_NCU_FA3="$3"
  exec bash kernels/flash_attention_fwd/bench/run_variants.sh
}

# final_run KERNEL LOG: the final run of KERNEL (a path from the repository
# root) into $OUT: scripts/device/full_run.sh's phase anchor, with kseek
# eval of every scenario and extra_scenarios.json (no timing), the anchor
# beside FA3, cuDNN and FA2 (with its second table by the timeline: the
# short calls' spans, at most 180 s of them), and the pad sweep (about
# 400 s, at most 520; .device and .anchors carried); its output to LOG.
# FINAL_HARNESS_JSON: the harness.json of an earlier kseek eval of the same
# kernel (eval_candidate.sh's, carried; its PTX shown identical by
# bench/ptx_same.sh): both evals skipped, for a kernel whose compile and
# eval together leave too little of a call's 600 s for the rest.
# FINAL_ANCHOR_TIMEOUT, FINAL_EVAL_TIMEOUT: the phase's and the eval's
# limits in seconds (default 520 and 260: since v4e the compile takes about
# 120 s of the phase and the eval about 195).
final_run() {
  local eval=(FA_EVAL_TIMEOUT="${FINAL_EVAL_TIMEOUT:-260}" FA_EXTRA=1)
  if [[ -n ${FINAL_HARNESS_JSON:-} ]]; then
    [[ -f $FINAL_HARNESS_JSON ]] ||
      { echo "final_run: no file $FINAL_HARNESS_JSON (FINAL_HARNESS_JSON)" > "$2"; return 2; }
    eval=(FA_HARNESS_JSON="$(realpath "$FINAL_HARNESS_JSON")" FA_EXTRA=0)
  fi
  ( cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." &&
    env "${eval[@]}" PHASES=anchor ANCHOR_KERNEL="$1" ANCHOR_TIMEOUT="${FINAL_ANCHOR_TIMEOUT:-520}" \
      FA_EVAL_ARGS="--no-timing --scenario-timeout 10" \
      FA_ANCHOR_ARGS="--budget-s 0.15 --samples 8" FA_PAD_SWEEP=0,100,300,1000 \
      bash scripts/device/full_run.sh ) > "$2" 2>&1
}

# kernel_lib DIR NAME FILE: FILE (from the repository root) built as the
# harness builds a candidate for sm_90a (harness/src/cuda_flags.inc) into
# DIR/NAME.so, ptxas's report in DIR/NAME.ptxas.txt.
kernel_lib() {
  ( cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
    local flags
    mapfile -t flags < <(harness_flags)
    PATH=/usr/local/cuda/bin:$PATH nvcc -gencode=arch=compute_90a,code=sm_90a "${flags[@]}" \
      -I harness/include -o "$1/$2.so" "$3" > "$1/$2.ptxas.txt" 2>&1 )
}

# streams_check_build DIR: tests/fa_streams/streams_check.cu into
# DIR/streams_check (calls on several streams at once and from a graph,
# against the same calls made alone: `DIR/streams_check LIB.so`).
streams_check_build() {
  ( cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
    PATH=/usr/local/cuda/bin:$PATH nvcc -O2 -std=c++17 -arch=sm_90a -I harness/include \
      -o "$1/streams_check" tests/fa_streams/streams_check.cu -ldl )
}

# streams_check_start DIR NAME FILE: streams_check_build DIR and kernel_lib
# DIR NAME FILE in the background (log DIR/build.log); its pid in $!.
streams_check_start() {
  ( streams_check_build "$1" && kernel_lib "$1" "$2" "$3" ) > "$1/build.log" 2>&1 &
}

# streams_check_on DIR NAME FILE: DIR/streams_check on DIR/NAME.so into
# FILE, its exit status and its lines after the references printed.
streams_check_on() {
  timeout 300 "$1/streams_check" "$1/$2.so" > "$3" 2>&1
  echo "== streams_check $2: exit $?"
  grep -v "^reference" "$3" | tail -14
}

# streams_check_report PID DIR NAME FILE: once streams_check_start's PID
# has ended, streams_check_on DIR NAME FILE, or the build's logs if it failed.
streams_check_report() {
  if wait "$1"; then
    streams_check_on "$2" "$3" "$4"
  else
    echo "== streams_check $3: did not build"
    tail -n 20 "$2/build.log" "$2/$3.ptxas.txt" 2>/dev/null
  fi
}

# candidate_kernel DIR: the kernel file a plan runs, printed as a path from
# the repository root: hopper.cu as it is, or, with FA_DEFINES (words
# NAME=NUMBER, e.g. "KSEEK_FA_TAIL_SPLIT=6"), a copy in DIR with those
# switches set by #define lines at its top (a candidate default, run before
# it becomes one; bench/ptx_same.sh then shows the committed default's PTX
# identical). A word that is not NAME=NUMBER, or names no switch of
# hopper.cu (has_switch, bench/switches.sh), fails with the word named.
candidate_kernel() {
  local d
  if [[ -z ${FA_DEFINES:-} ]]; then
    echo "$cu"
    return 0
  fi
  ( cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
    for d in $FA_DEFINES; do
      [[ $d =~ ^(KSEEK_FA_[A-Z0-9_]+)=([0-9]+)$ ]] ||
        { echo "candidate_kernel: FA_DEFINES wants NAME=NUMBER words, not '$d'" >&2; exit 2; }
      has_switch "$cu" "${BASH_REMATCH[1]}" ||
        { echo "candidate_kernel: $cu has no switch ${BASH_REMATCH[1]}" >&2; exit 2; }
      echo "#define ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
    done > "$1/hopper.cu" && cat "$cu" >> "$1/hopper.cu" ) || return 2
  echo "$1/hopper.cu"
}

# final_plan: the final run of hopper.cu (candidate_kernel's: as it is, or
# with FA_DEFINES) into ${OUT:-/tmp/fa_final},
# its log there as final.log, then the log's last 60 lines (the plan
# final.sh), between two measurements of the GPU's ceilings (bf16 matmul
# and copy bandwidth: bench/ceilings.py, into ceilings.txt); and
# tests/fa_streams/streams_check.cu on the same file (built
# while the run goes; about 20 s of GPU time after it) into streams.txt.
final_plan() {
  local out=${OUT:-/tmp/fa_final} sc kernel
  mkdir -p "$out"
  sc=$(mktemp -d)
  kernel=$(candidate_kernel "$sc") || return 2
  [[ -n ${FA_DEFINES:-} ]] && echo "== the candidate: $FA_DEFINES ($kernel)"
  streams_check_start "$sc" hopper "$kernel"
  local pid=$!
  python3 kernels/flash_attention_fwd/bench/ceilings.py --label before > "$out/ceilings.txt" 2>&1
  OUT=$out final_run "$kernel" "$out/final.log"
  python3 kernels/flash_attention_fwd/bench/ceilings.py --label after >> "$out/ceilings.txt" 2>&1
  tail -60 "$out/final.log"
  cat "$out/ceilings.txt"
  compare_with_last_final "$out"
  streams_check_report "$pid" "$sc" hopper "$out/streams.txt"
}

# last_final_results GPU_NAME: the newest final run's results file of that
# GPU kind (bench/results/hopper_v*_h100.txt or _h200.txt, by version
# order), or nothing.
last_final_results() {
  local kind
  case $1 in
    *H100*) kind=h100 ;;
    *H200*) kind=h200 ;;
    *) return 0 ;;
  esac
  # v4 < v4a < ... < v4i < v5: the number, then the letters.
  python3 - "$kind" <<'PY'
import glob, re, sys
kind = sys.argv[1]
runs = []
for path in glob.glob(f"kernels/flash_attention_fwd/bench/results/hopper_v*_{kind}.txt"):
    m = re.search(r"/hopper_v(\d+)([a-z]*)_" + kind + r"\.txt$", path)
    if m:
        runs.append((int(m.group(1)), len(m.group(2)), m.group(2), path))
if runs:
    print(max(runs)[3])
PY
}

# compare_with_last_final OUT: this run's anchor table ($OUT/anchor.log)
# row by row against the last final run on the same GPU kind (the one its
# first line, "device NAME; ...", names; FINAL_COMPARE, default
# last_final_results), compare_runs.py --moved, into $OUT/moved.txt: rows
# where the candidate moved and FA3 and cuDNN did not, and the
# references' outliers.
compare_with_last_final() {
  local out=$1 last gpu
  gpu=$(sed -n '1s/^device \([^;]*\);.*/\1/p' "$out/anchor.log" 2>/dev/null)
  last=${FINAL_COMPARE:-$(last_final_results "$gpu")}
  if [[ -z $last || ! -f $last ]]; then
    echo "== no earlier final run on ${gpu:-this GPU} to compare with (FINAL_COMPARE)" | tee "$out/moved.txt"
    return 0
  fi
  echo "== row by row against $last"
  python3 kernels/flash_attention_fwd/bench/compare_runs.py "last=$last" "this=$out/anchor.log" \
    --moved 10 > "$out/moved.txt" 2>&1
  sed -n '/row by row/,$p' "$out/moved.txt"
}
