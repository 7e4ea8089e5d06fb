#!/usr/bin/env bash
# Where ptxas puts the key-tile loops' waits, without a GPU or cuobjdump:
# each build of FA_VARIANTS (run_variants.sh's syntax) compiled to an
# sm_90a cubin with the harness's flags, read by cubin_events.py and
# judged by sass_loops.py --waits (the P V wait before the softmax, spill
# instructions in a loop). Runs on a CPU machine (nvcc only), two builds
# at a time, about 90 s each for hopper.cu on two cores.
#
#   FA_VARIANTS="def=kernels/flash_attention_fwd/hopper.cu;am=kernels/flash_attention_fwd/hopper.cu -DKSEEK_FA_ALWAYS_MASK=5" \
#     bash kernels/flash_attention_fwd/bench/sass_check.sh
#
# Prints, per build, nvcc's exit status, ptxas's wgmma serialisation
# warnings and the marked loops; keeps NAME.cubin, NAME.ptxas.txt,
# NAME.sass (cubin_events.py's listing) and NAME.loops.txt in
# SASS_CHECK_DIR (default a temporary folder). Exit 0 when every build
# compiled, 1 when one did not, 2 on a bad FA_VARIANTS. What it reads is
# the compiled code, not its speed: the device run decides.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
source "$here/switches.sh"
cd "$root" || exit 2
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[[ -x $nvcc ]] || nvcc=$(command -v nvcc) || { echo "sass_check.sh: no nvcc found" >&2; exit 2; }
dir=${SASS_CHECK_DIR:-$(mktemp -d)}
mkdir -p "$dir" || exit 2

# The harness's flags for a cubin: the list compile.cc includes, less the
# shared-library ones.
mapfile -t all_flags < <(harness_flags)
flags=()
for f in "${all_flags[@]}"; do
  case $f in -Xcompiler | -fPIC | -shared) ;; *) flags+=("$f") ;; esac
done
((${#flags[@]} > 0)) || { echo "sass_check.sh: no flags in harness/src/cuda_flags.inc" >&2; exit 2; }

IFS=';' read -r -a specs <<< "${FA_VARIANTS:?set FA_VARIANTS=NAME=FILE [flags];...}"
for spec in "${specs[@]}"; do
  name=${spec%%=*}
  [[ $name =~ ^[A-Za-z0-9_.-]+$ && $spec == *=* ]] || { echo "sass_check.sh: bad variant '$spec' (NAME=FILE [flags])" >&2; exit 2; }
done
check_variants sass_check.sh

build() {  # NAME FILE FLAGS...
  local name=$1 file=$2
  shift 2
  "$nvcc" -gencode=arch=compute_90a,code=sm_90a -cubin "${flags[@]}" -I harness/include "$@" \
    -o "$dir/$name.cubin" "$file" > "$dir/$name.ptxas.txt" 2>&1
  echo $? > "$dir/$name.rc"
}
running=0
for spec in "${specs[@]}"; do
  name=${spec%%=*}; rest=${spec#*=}
  read -r -a words <<< "$rest"
  build "$name" "${words[0]}" "${words[@]:1}" &
  if (( ++running == 2 )); then wait -n; running=1; fi
done
wait
status=0
for spec in "${specs[@]}"; do
  name=${spec%%=*}
  rc=$(cat "$dir/$name.rc")
  serial=$(grep -c "C7514\|C7515\|C7520\|serialized" "$dir/$name.ptxas.txt")
  echo "-- $name: nvcc exit $rc, wgmma serialisation warnings: $serial"
  if [[ $rc != 0 ]]; then tail -20 "$dir/$name.ptxas.txt"; status=1; continue; fi
  python3 "$here/cubin_events.py" "$dir/$name.cubin" --match AttentionForwardWgmma > "$dir/$name.sass" &&
    python3 "$here/sass_loops.py" --waits "$dir/$name.sass" --match AttentionForwardWgmma \
      > "$dir/$name.loops.txt" 2>&1
  grep "\*\*\|^key-tile loops\|^sass_loops\|^cubin_events" "$dir/$name.loops.txt" | sed 's/^/   /'
done
echo "== files in $dir"
exit $status
