#!/usr/bin/env bash
# Does a change to hopper.cu leave the compiled kernels as they were?
# Compiles two versions of the file to PTX for sm_90a (as the harness
# compiles it, without line info) and compares them with source locations,
# comments and the compiler's per-file name hashes taken out. Runs on a CPU
# machine (nvcc only); no GPU.
#
#   bench/ptx_same.sh [OLD [NEW]] [-- nvcc flags, e.g. -DKSEEK_FA_CLUSTER=0]
#
# OLD: a git revision (its hopper.cu) or a file path; default HEAD.
# NEW: a file path; default the working tree's hopper.cu.
# PTX_SAME_OLD_SED: a sed script applied to OLD's PTX before the comparison
# (a template parameter removed from the kernels' names, say).
# Exit 0 and "PTX identical" when equal; exit 1 with the first lines of the
# diff (the whole diff in $PTX_SAME_DIR, default a temporary folder) when not.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
old=HEAD new="$here/hopper.cu"
flags=()
args=()
while (($#)); do
  if [[ $1 == -- ]]; then shift; flags=("$@"); break; fi
  args+=("$1"); shift
done
((${#args[@]} > 0)) && old=${args[0]}
((${#args[@]} > 1)) && new=${args[1]}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[[ -x $nvcc ]] || nvcc=$(command -v nvcc) || { echo "ptx_same: no nvcc found" >&2; exit 2; }
dir=${PTX_SAME_DIR:-$(mktemp -d)}
mkdir -p "$dir/old" "$dir/new"
if [[ -f $old ]]; then
  cp "$old" "$dir/old/hopper.cu"
else
  git -C "$root" show "$old:kernels/flash_attention_fwd/hopper.cu" > "$dir/old/hopper.cu" ||
    { echo "ptx_same: no hopper.cu at revision $old" >&2; exit 2; }
fi
[[ -f $new ]] || { echo "ptx_same: no file $new" >&2; exit 2; }
cp "$new" "$dir/new/hopper.cu"

# Both files compile under the same name in folders of their own, so that
# nothing but their text differs.
compile() {
  (cd "$dir/$1" && "$nvcc" -arch=sm_90a -O3 -std=c++17 --expt-relaxed-constexpr \
     -I "$root/harness/include" ${flags[@]+"${flags[@]}"} -ptx -o hopper.ptx hopper.cu)
}
echo "ptx_same: compiling $old and $new${flags[*]:+ with ${flags[*]}} in $dir" >&2
compile old & pid=$!
compile new
wait "$pid"

normalise() {
  sed -E -e '/^[[:space:]]*\.loc[[:space:]]/d' -e '/^[[:space:]]*\.file[[:space:]]/d' \
         -e '/^[[:space:]]*\/\//d' -e 's/_INTERNAL_[0-9a-f]+_/_INTERNAL_X_/g' \
         -e 's/_GLOBAL__N__[0-9a-f]{8}_/_GLOBAL__N__X_/g' "$1"
}
normalise "$dir/old/hopper.ptx" | sed -E "${PTX_SAME_OLD_SED:-}" > "$dir/old.ptx"
normalise "$dir/new/hopper.ptx" > "$dir/new.ptx"
if cmp -s "$dir/old.ptx" "$dir/new.ptx"; then
  echo "PTX identical ($(grep -c '^\.visible \.entry\|^\.entry' "$dir/new.ptx") kernels, $(wc -l < "$dir/new.ptx") lines)"
  exit 0
fi
diff "$dir/old.ptx" "$dir/new.ptx" > "$dir/ptx.diff" || true
echo "PTX differs: $(grep -c '^[<>]' "$dir/ptx.diff") lines; the diff is $dir/ptx.diff" >&2
head -40 "$dir/ptx.diff" >&2
exit 1
