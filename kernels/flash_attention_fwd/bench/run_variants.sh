#!/usr/bin/env bash
# Builds of the Hopper kernel side by side, as one device command (tuning).
#
#   FA_VARIANTS="head=.device/variants/hopper_head.cu;new=kernels/flash_attention_fwd/hopper.cu;noftz=kernels/flash_attention_fwd/hopper.cu -DKSEEK_FA_FAST_EXP2=0" \
#     bash kernels/flash_attention_fwd/bench/run_variants.sh
#
# Each variant NAME=FILE [nvcc flags] is compiled with the harness's flags
# (harness/src/cuda_flags.inc, as `kseek compile --target sm_90a` does; no
# bundle needed), all at once.
# Per variant: the ptxas report (NAME.ptxas.txt; wgmma serialisation
# warnings and the WGMMA kernels' spills are printed) and, when cuobjdump
# is there, the SASS of the kernels (NAME.sass.gz) and where each key-tile
# loop waits for P V (NAME.loops.txt, bench/sass_loops.py --waits; the
# loops whose wait comes before the softmax are printed), all in
# $OUT/builds.tgz
# (the device returns few files). Then variants.py
# times every build beside cuDNN on FA_SCENARIOS ("grid", a comma list, or
# by default 15 grid shapes and 5 others (ragged, seqlen_q > seqlen_k, GQA, prefill;
# "none": no table); a build that hangs is named ("HANG: ...") and the
# others run again without it. With FA_PLACEMENT="SCENARIOS PLACEMENTS"
# placement.py then times the builds and cuDNN with the inputs at several
# device addresses ($OUT/placement.txt). With FA_CLOCKS=SCENARIOS clocks.py
# times the builds, FA3 and cuDNN flushed and padded and reads the SM clock
# over the pad and right after each call ($OUT/clocks.txt). With
# FA_ITEM_COSTS=SEQLENS_K item_costs.py times the builds, FA3 and cuDNN the
# same way on one family of shapes whose keys grow (FA_ITEM_COSTS_ARGS: its
# other options) and fits each backend's cycles per item to a fixed cost
# and a cost per 128 keys ($OUT/item_costs.txt). With FA_POWER=SCENARIOS
# power.py runs the builds, FA3 and cuDNN back to back under nvidia-smi
# (sustained TFLOP/s, SM clock, board power: $OUT/power.txt). With
# FA_TIMELINE=SCENARIOS timeline.py shows each kernel of a call of the
# builds, FA3 and cuDNN on the GPU's timeline, its duration and its gap
# after the kernel before it ($OUT/timeline.txt, timeline.json). With
# FA_ITEM_TRACE=SCENARIOS item_trace.py reads the per-round stamps of a
# build made with -DKSEEK_FA_TRACE=1 (FA_ITEM_TRACE_BUILD, default the
# first build; several comma-separated, each traced): each phase of an
# item inside the WGMMA kernel ($OUT/item_trace.txt, item_trace.json,
# item_trace_raw.tgz; item_trace_NAME.* for several builds). With
# FA_NCU="NAME SCENARIO [KERNEL]" (several separated by ';'), Nsight Compute
# profiles build NAME's first WGMMA-kernel launch (or first launch of the
# kernel whose name matches the regex KERNEL) on SCENARIO (full set,
# clocks left alone): its details page as text ($OUT/ncu_details.txt)
# and per-instruction source counters, summed by stall reason, by
# instruction and (executed instructions) by opcode by ncu_stalls.py
# ($OUT/ncu_stalls.txt, printed). With FA_NCU_FA3=SCENARIO (several
# separated by ';'; .anchors/fa3 carried), FA3's first forward-kernel
# launch on each SCENARIO is profiled the same way, run by anchor.py
# beside the first build ($OUT/ncu_fa3_details.txt, $OUT/ncu_fa3_stalls.txt);
# with FA_NCU_CUDNN=SCENARIO (several separated by ';') cuDNN's attention
# kernel likewise ($OUT/ncu_cudnn_details.txt, ncu_cudnn_stalls.txt). The
# per-instruction CSVs and the logs go into $OUT/ncu_raw.tgz (the reports
# stay on the device: they are large).
# FA_BUILD_ONLY=DIR: only compile the builds, into DIR (NAME.so, its ptxas
# report, NAME.spec: the variant as given), on any machine with nvcc;
# FA_PREBUILT=DIR then (with DIR carried) takes them instead of compiling,
# for a short device call. A spec that differs from the one built stops
# the run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
source "$(dirname "${BASH_SOURCE[0]}")/switches.sh"
OUT="${OUT:-/tmp/fa_variants}"
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT"
work=$(mktemp -d)
logs=$work/builds
mkdir -p "$logs"
cd "$ROOT"

# The harness's nvcc flags, from the list compile.cc includes.
mapfile -t harness_flags < <(harness_flags)
(( ${#harness_flags[@]} > 0 )) || { echo "run_variants.sh: no flags in harness/src/cuda_flags.inc" >&2; exit 2; }

IFS=';' read -r -a specs <<< "${FA_VARIANTS:?set FA_VARIANTS=NAME=FILE [flags];...}"
# Every variant checked before any compiles (a removed or misspelt switch
# would build the defaults under the variant's name).
check_variants run_variants.sh
names=()
for spec in "${specs[@]}"; do
  name=${spec%%=*}; rest=${spec#*=}
  read -r -a words <<< "$rest"
  file=${words[0]}; flags=("${words[@]:1}")
  names+=("$name")
  if [[ -n ${FA_PREBUILT:-} ]]; then
    # Built beforehand by FA_BUILD_ONLY (on any machine with nvcc), for
    # the same spec: the library and its ptxas report.
    [[ -f $FA_PREBUILT/$name.so && -f $FA_PREBUILT/$name.spec ]] ||
      { echo "run_variants.sh: $name: no $FA_PREBUILT/$name.so (FA_BUILD_ONLY builds it)" >&2; exit 2; }
    [[ $(cat "$FA_PREBUILT/$name.spec") == "$spec" ]] ||
      { echo "run_variants.sh: $name: $FA_PREBUILT/$name.so was built for '$(cat "$FA_PREBUILT/$name.spec")', not '$spec'" >&2; exit 2; }
    cp "$FA_PREBUILT/$name.so" "$work/$name.so"
    cp "$FA_PREBUILT/$name.ptxas.txt" "$logs/$name.ptxas.txt"
    echo 0 > "$work/$name.rc"
    continue
  fi
  ( nvcc -gencode=arch=compute_90a,code=sm_90a "${harness_flags[@]}" \
      -I harness/include "${flags[@]}" -o "$work/$name.so" "$file" \
      > "$logs/$name.ptxas.txt" 2>&1
    echo $? > "$work/$name.rc" ) &
done
start=$(date +%s)
wait
echo "== built ${#names[@]} variant(s) in $(( $(date +%s) - start )) s${FA_PREBUILT:+ (prebuilt in $FA_PREBUILT)}"
if [[ -n ${FA_BUILD_ONLY:-} ]]; then
  mkdir -p "$FA_BUILD_ONLY"
  for spec in "${specs[@]}"; do
    name=${spec%%=*}
    [[ $(cat "$work/$name.rc") == 0 ]] ||
      { echo "-- $name: nvcc failed:" >&2; tail -20 "$logs/$name.ptxas.txt" >&2; exit 1; }
    cp "$work/$name.so" "$logs/$name.ptxas.txt" "$FA_BUILD_ONLY/"
    printf '%s' "$spec" > "$FA_BUILD_ONLY/$name.spec"
  done
  echo "== built into $FA_BUILD_ONLY; on the GPU: FA_PREBUILT=$FA_BUILD_ONLY with the same FA_VARIANTS"
  exit 0
fi
libs=()
for name in "${names[@]}"; do
  rc=$(cat "$work/$name.rc")
  serial=$(grep -c "C7514\|C7515\|C7520\|serialized" "$logs/$name.ptxas.txt")
  echo "-- $name: nvcc exit $rc, wgmma serialisation warnings: $serial"
  grep -A2 "entry function.*AttentionForwardWgmma" "$logs/$name.ptxas.txt" |
    grep "stack frame" | sed 's/^ *//' | sort | uniq -c | sed 's/^/   WGMMA kernels: /'
  [[ $rc == 0 ]] || { tail -20 "$logs/$name.ptxas.txt"; continue; }
  libs+=(--lib "$name=$work/$name.so")
  if command -v cuobjdump > /dev/null; then
    cuobjdump -sass "$work/$name.so" | gzip > "$logs/$name.sass.gz"
    # The key-tile loops where ptxas put the wait for P V before the
    # softmax (sass_loops.py --waits; the whole list in builds.tgz).
    python3 "$ROOT/kernels/flash_attention_fwd/bench/sass_loops.py" --waits \
      "$logs/$name.sass.gz" --match AttentionForwardWgmma > "$logs/$name.loops.txt" 2>&1
    grep "\*\*\|^key-tile loops\|^sass_loops" "$logs/$name.loops.txt" | sed 's/^/   /'
  fi
done
tar -C "$work" -czf "$OUT/builds.tgz" builds

cd "$ROOT/kernels/flash_attention_fwd/bench"
default=grid_hd64_full_s16384_bf16,grid_hd64_causal_s16384_bf16,grid_hd128_full_s16384_bf16,grid_hd128_causal_s16384_bf16,grid_hd256_full_s16384_bf16,grid_hd256_causal_s16384_bf16,grid_hd64_full_s2048_bf16,grid_hd64_causal_s2048_bf16,grid_hd128_full_s2048_bf16,grid_hd128_causal_s2048_bf16,grid_hd256_full_s2048_bf16,grid_hd256_causal_s2048_bf16,grid_hd128_full_s512_bf16,grid_hd128_causal_s512_bf16,grid_hd128_full_s16384_f16,ragged_s1000_hd128_causal_bf16,qlong_q1024_k512_hd128_causal_bf16,gqa4_hd128_causal_s2048_bf16,prefill_q2048_k16384_hd128_causal_bf16,ragged_s3001_hd256_causal_bf16
case "${FA_SCENARIOS:-$default}" in
  grid) scen=(--grid-only) ;;
  none) scen=() ;;
  *) scen=(--scenarios "${FA_SCENARIOS:-$default}") ;;
esac
# A build that hangs ends variants.py (exit 3, "hung" in its JSON); the
# others then run again without it, in a fresh process.
for attempt in 1 2 3 4; do
  [[ ${FA_SCENARIOS:-} == none ]] && break
  start=$(date +%s)
  timeout "${FA_VARIANTS_TIMEOUT:-240}" python3 variants.py "${libs[@]}" "${scen[@]}" \
    ${FA_VARIANT_ARGS:-} --out "$OUT/variants.json" 2>&1 | tee -a "$OUT/variants.txt"
  rc=${PIPESTATUS[0]}
  echo "== variants.py: exit $rc in $(( $(date +%s) - start )) s"
  [[ $rc == 3 ]] || break
  hung=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("hung", ""))' \
    "$OUT/variants.json")
  [[ -n $hung ]] || break
  echo "== $hung hangs: the other builds again without it"
  kept=()
  for ((i = 0; i < ${#libs[@]}; i += 2)); do
    [[ ${libs[i+1]} == "$hung="* ]] || kept+=("${libs[i]}" "${libs[i+1]}")
  done
  libs=("${kept[@]}")
  (( ${#libs[@]} > 0 )) || break
done

# FA3 unpacked into /tmp/fa3 from .anchors (when carried), once for the
# steps below that run it; status 0 when it is there.
fa3_state=
fa3_ready() {
  if [[ -z $fa3_state ]]; then
    fa3_state=1
    [[ -f $ROOT/.anchors/fa3/setup.sh ]] &&
      bash "$ROOT/.anchors/fa3/setup.sh" /tmp/fa3 > "$work/fa3_setup.log" 2>&1 &&
      fa3_state=0
  fi
  return "$fa3_state"
}

# logged LIMIT NAME TXT COMMAND...: COMMAND under `timeout LIMIT`, its
# output also in $OUT/TXT, then "== NAME: exit STATUS in S s".
logged() {
  local limit=$1 name=$2 txt=$3 start
  shift 3
  start=$(date +%s)
  timeout "$limit" "$@" 2>&1 | tee "$OUT/$txt"
  echo "== $name: exit ${PIPESTATUS[0]} in $(( $(date +%s) - start )) s"
}

# with_fa3 SCRIPT SCENARIOS TIMEOUT [ARGS...]: SCRIPT (power.py,
# clocks.py or item_costs.py) on the builds, FA3 (.anchors carried, where it sets up) and
# cuDNN, its output also in $OUT/<SCRIPT without .py>.txt.
with_fa3() {
  local script=$1 scenarios=$2 limit=$3
  shift 3
  local fa3_dir=()
  fa3_ready && fa3_dir=(--fa3 /tmp/fa3/fa/hopper)
  logged "$limit" "$script" "${script%.py}.txt" python3 "$script" "${libs[@]}" \
    "${fa3_dir[@]}" --scenarios "$scenarios" "$@"
}

# With FA_POWER=SCENARIOS, power.py runs the builds, FA3 and cuDNN back to
# back on each scenario under nvidia-smi: sustained TFLOP/s, SM clock and
# board power ($OUT/power.txt).
if [[ -n "${FA_POWER:-}" ]]; then
  # shellcheck disable=SC2086  # FA_POWER_ARGS: several words
  with_fa3 power.py "$FA_POWER" "${FA_POWER_TIMEOUT:-300}" ${FA_POWER_ARGS:-}
fi

# With FA_CLOCKS=SCENARIOS, clocks.py times the builds, FA3 and cuDNN
# flushed and padded as variants.py does, and reads the SM clock over the
# pad and right after each call ($OUT/clocks.txt).
if [[ -n "${FA_CLOCKS:-}" ]]; then
  # shellcheck disable=SC2086  # FA_CLOCKS_ARGS: several words
  with_fa3 clocks.py "$FA_CLOCKS" "${FA_CLOCKS_TIMEOUT:-300}" ${FA_CLOCKS_ARGS:-}
fi

# With FA_ITEM_COSTS=SEQLENS_K, item_costs.py: an item's fixed cost and its
# cost per key per backend, at the clock each call ended at
# ($OUT/item_costs.txt).
if [[ -n "${FA_ITEM_COSTS:-}" ]]; then
  # shellcheck disable=SC2086  # FA_ITEM_COSTS_ARGS: several words
  with_fa3 item_costs.py "$FA_ITEM_COSTS" "${FA_ITEM_COSTS_TIMEOUT:-300}" ${FA_ITEM_COSTS_ARGS:-}
fi

# With FA_ITEM_TRACE=SCENARIOS, item_trace.py on the build named
# FA_ITEM_TRACE_BUILD (default the first), which must be built with
# -DKSEEK_FA_TRACE=1: where each round of the WGMMA kernel's blocks spends
# its time, from the kernel's own stamps ($OUT/item_trace.txt, for scripts
# $OUT/item_trace.json, the records in $OUT/item_trace_raw.tgz).
# Several builds, comma-separated (each built with the flag): one run each,
# its files named item_trace_NAME.* instead.
if [[ -n "${FA_ITEM_TRACE:-}" ]]; then
  IFS=, read -r -a tr_builds <<< "${FA_ITEM_TRACE_BUILD:-${names[0]}}"
  for tr_build in "${tr_builds[@]}"; do
    tr_name=item_trace
    (( ${#tr_builds[@]} > 1 )) && tr_name=item_trace_$tr_build
    # shellcheck disable=SC2086  # FA_ITEM_TRACE_ARGS: several words
    logged "${FA_ITEM_TRACE_TIMEOUT:-180}" "item_trace.py ($tr_build)" "$tr_name.txt" \
      python3 item_trace.py --lib "$work/$tr_build.so" --scenarios "$FA_ITEM_TRACE" \
      --json "$OUT/$tr_name.json" --raw "$work/$tr_name" ${FA_ITEM_TRACE_ARGS:-}
    [[ -d $work/$tr_name ]] && tar -C "$work" -czf "$OUT/${tr_name}_raw.tgz" "$tr_name"
  done
fi

# With FA_TIMELINE=SCENARIOS, timeline.py: each kernel of a call of the
# builds, FA3 and cuDNN on the GPU's timeline (torch.profiler), its
# duration and its gap after the kernel before it ($OUT/timeline.txt, and
# for scripts $OUT/timeline.json).
if [[ -n "${FA_TIMELINE:-}" ]]; then
  # shellcheck disable=SC2086  # FA_TIMELINE_ARGS: several words
  with_fa3 timeline.py "$FA_TIMELINE" "${FA_TIMELINE_TIMEOUT:-240}" \
    --json "$OUT/timeline.json" ${FA_TIMELINE_ARGS:-}
fi

# With FA_PLACEMENT="SCENARIOS PLACEMENTS", placement.py times the builds
# and cuDNN on the same inputs at several device addresses
# ($OUT/placement.txt, placement.json).
if [[ -n "${FA_PLACEMENT:-}" ]]; then
  read -r pl_scen pl_list <<< "$FA_PLACEMENT"
  # shellcheck disable=SC2086  # FA_PLACEMENT_ARGS: several words
  logged "${FA_PLACEMENT_TIMEOUT:-240}" placement.py placement.txt \
    python3 placement.py "${libs[@]}" --scenarios "$pl_scen" \
    ${pl_list:+--placements "$pl_list"} ${FA_PLACEMENT_ARGS:-} --out "$OUT/placement.json"
fi

# profile NAME WHAT -- COMMAND...: Nsight Compute on the first launch of
# the kernel matched by regex WHAT under COMMAND (full set, clocks left
# alone); the details page to $OUT/ncu_NAME_details.txt (NAME "ours":
# ncu_details.txt), the stalls to ..._stalls.txt, raw files to $work/ncu.
mkdir -p "$work/ncu"
profile() {
  local name=$1 what=$2 tag; shift 3
  [[ $name == ours ]] && tag=ncu || tag=ncu_$name
  local start=$(date +%s)
  timeout "${FA_NCU_TIMEOUT:-180}" ncu --clock-control none --set full \
    --import-source yes --kernel-name-base demangled -k "regex:$what" -c 1 -f \
    -o "$work/ncu/$tag" "$@" > "$work/ncu/$tag.log" 2>&1
  echo "== ncu ($name): exit $? in $(( $(date +%s) - start )) s"
  if [[ -f $work/ncu/$tag.ncu-rep ]]; then
    ncu -i "$work/ncu/$tag.ncu-rep" --page details > "$OUT/${tag}_details.txt" 2>&1
    ncu -i "$work/ncu/$tag.ncu-rep" --page source --csv --print-source sass 2>&1 |
      gzip > "$work/ncu/${tag}_source.csv.gz"
    grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Executed Instructions  |L2 Hit Rate|Mem Busy" \
      "$OUT/${tag}_details.txt" | head -20
    python3 "$ROOT/kernels/flash_attention_fwd/bench/ncu_stalls.py" \
      "$work/ncu/${tag}_source.csv.gz" 40 > "$OUT/${tag}_stalls.txt" 2>&1
    head -30 "$OUT/${tag}_stalls.txt"
  else
    tail -20 "$work/ncu/$tag.log"
  fi
}
# FA_NCU may name several "NAME SCENARIO [KERNEL]" specs, separated by ';'
# (KERNEL: a regex of the kernel's name, AttentionForwardWgmma unless
# given, e.g. AttentionDecode or CombineSplits): the first profile's files
# are ncu_*, the others' ncu_2_*, ncu_3_*, ...
if [[ -n "${FA_NCU:-}" ]]; then
  IFS=';' read -r -a ncu_specs <<< "$FA_NCU"
  for i in "${!ncu_specs[@]}"; do
    read -r ncu_name ncu_scen ncu_kernel <<< "${ncu_specs[i]}"
    tag=ours; (( i > 0 )) && tag=$((i + 1))
    echo "== ncu $tag: $ncu_name on $ncu_scen (${ncu_kernel:-AttentionForwardWgmma})"
    profile "$tag" "${ncu_kernel:-AttentionForwardWgmma}" -- python3 variants.py \
      --lib "$ncu_name=$work/$ncu_name.so" --scenarios "$ncu_scen" \
      --samples 1 --warmup 0 --budget-s 0.01
  done
fi
# FA_NCU_FA3 may name several scenarios, separated by ';': the first
# profile's files are ncu_fa3_*, the others' ncu_fa3_2_*, ncu_fa3_3_*, ...
if [[ -n "${FA_NCU_FA3:-}" ]]; then
  if fa3_ready; then
    IFS=';' read -r -a fa3_scens <<< "$FA_NCU_FA3"
    for i in "${!fa3_scens[@]}"; do
      tag=fa3; (( i > 0 )) && tag=fa3_$((i + 1))
      echo "== ncu $tag: FA3 on ${fa3_scens[i]}"
      profile "$tag" "FlashAttnFwdSm90" -- python3 anchor.py \
        --lib "$work/${names[0]}.so" --fa3 /tmp/fa3/fa/hopper \
        --scenarios "${fa3_scens[i]}" --samples 1 --warmup 0 --budget-s 0.01 \
        --out "$work/ncu/anchor_$tag.json"
    done
  else
    echo "== ncu (fa3): the FA3 anchor did not set up"; tail -5 "$work/fa3_setup.log" 2>/dev/null
  fi
fi
# FA_NCU_CUDNN may name several scenarios, separated by ';': cuDNN's
# attention kernel (SDPA through PyTorch; a name with "fprop" in it, e.g.
# cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_..., whose tile
# sizes are in the name) on each, run by anchor.py beside the first build
# without FA3; the first profile's files are ncu_cudnn_*, the others'
# ncu_cudnn_2_*, ...
if [[ -n "${FA_NCU_CUDNN:-}" ]]; then
  IFS=';' read -r -a cudnn_scens <<< "$FA_NCU_CUDNN"
  for i in "${!cudnn_scens[@]}"; do
    tag=cudnn; (( i > 0 )) && tag=cudnn_$((i + 1))
    echo "== ncu $tag: cuDNN on ${cudnn_scens[i]}"
    FA3_HOPPER= profile "$tag" "fprop" -- python3 anchor.py \
      --lib "$work/${names[0]}.so" --scenarios "${cudnn_scens[i]}" \
      --samples 1 --warmup 0 --budget-s 0.01 --no-auto-pad \
      --out "$work/ncu/anchor_$tag.json"
  done
fi
if [[ -n "${FA_NCU:-}${FA_NCU_FA3:-}${FA_NCU_CUDNN:-}" ]]; then
  cp "$work/fa3_setup.log" "$work/ncu/" 2>/dev/null
  (cd "$work" && tar -czf "$OUT/ncu_raw.tgz" ncu/*.csv.gz ncu/*.log)
fi
