#!/usr/bin/env bash
# One device call (about 250 s from cold; carry .anchors): what v3o's
# clusters change in the choices made without them, and a switch
# written but never timed. Two tables, each its own builds beside the
# default (def: when it ran, v3o's, KSEEK_FA_CLUSTER=6):
#   $OUT/q2/     head_dim 128 without causal masking, every class but
#                decode (37 scenarios): which kernel the short sequences
#                take now that all three run in clusters
#                  u0    176-key tiles everywhere, as FA3 (KSEEK_FA_HD128_FULL_Q2_UPTO=0)
#                  u2k   the two-Q-buffer kernel up to 2048 keys (=2048)
#                  q128  its tiles 128 keys, never 144 (KSEEK_FA_HD128_Q2_BLOCK_N=128)
#   $OUT/c192/   cluster192.sh's table: cl14, clusters on the D = 192 kernel
# then Nsight Compute of the default and FA3 at grid_hd128_full_s1024_bf16
# ($OUT/ncu/). The tables' text is printed; everything is in $OUT/all.tgz.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/after_v3o.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-/tmp/fa_variants}
mkdir -p "$out"
table() {  # DIR VARIANTS GLOB...
  local dir=$out/$1
  shift
  (OUT=$dir bash -c "source '$here/run_plan.sh'; run_plan \"\$@\"" plan "$@") > "$dir.log" 2>&1
  rm -f "$dir/builds.tgz"
  echo "== $dir"
  grep -v '^   WGMMA\|^--' "$dir.log" | tail -${TABLE_TAIL:-50}
}
cu=kernels/flash_attention_fwd/hopper.cu
table q2 "def=$cu;u0=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=0;u2k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=2048;q128=$cu -DKSEEK_FA_HD128_Q2_BLOCK_N=128" \
  '[!d]*hd128_full*'
table c192 "def=$cu;cl14=$cu -DKSEEK_FA_CLUSTER=14" '[!d]*hd160_full*' '[!d]*hd192_full*' \
  'grid_hd128_full_s1024*' 'grid_hd128_full_s4096*' 'grid_hd256_full_s512*' 'grid_hd256_full_s1024*'
mkdir -p "$out/ncu"
(OUT=$out/ncu bash -c "source '$here/run_plan.sh'; run_profile 'def=$cu' 'def grid_hd128_full_s1024_bf16' grid_hd128_full_s1024_bf16") \
  > "$out/ncu.log" 2>&1
rm -f "$out/ncu/builds.tgz"
tail -60 "$out/ncu.log"
tar -C "$out" -czf /tmp/all.tgz q2 c192 ncu q2.log c192.log ncu.log && rm -rf "$out"/* && mv /tmp/all.tgz "$out/all.tgz"
