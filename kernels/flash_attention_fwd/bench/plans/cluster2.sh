#!/usr/bin/env bash
# One device call (about 200 s; carry .anchors): why cluster.sh's clusters
# ran 0.65-0.8x the default wherever a cluster takes several items (and
# 1.00x where each takes one). First cluster_probe.cu (how many 2-block
# clusters of one block per SM run at once: the occupancy API and a
# launch), then on the grid and other non-causal head_dim 128 and 256
# scenarios that cluster.sh's clusters took:
#   def     the default
#   cl      clusters (KSEEK_FA_CLUSTER=6) as in cluster.sh
#   cl60    the same in at most 60 clusters (KSEEK_FA_CLUSTER_MAX=60)
#   clrel   the remote release without .release.cluster (KSEEK_FA_CLUSTER_ARRIVE=0)
# and the cluster kernels' SASS around their barriers ($OUT/cl_sass.txt).
# (KSEEK_FA_CLUSTER_MAX and KSEEK_FA_CLUSTER_ARRIVE were this call's only:
# the kernel now has clrel's arrival; NOTES.md v3o.)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/cluster2.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=${OUT:-/tmp/fa_variants}
mkdir -p "$out"
( cd "$root/kernels/flash_attention_fwd/bench" &&
  /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a -o /tmp/cluster_probe cluster_probe.cu &&
  for kb in 100 200 227; do /tmp/cluster_probe $kb; done ) 2>&1 | tee "$out/probe.txt"
(OUT=$out bash -c "source '$here/run_plan.sh'; run_plan \"def=\$cu;cl=\$cu -DKSEEK_FA_CLUSTER=6;cl60=\$cu -DKSEEK_FA_CLUSTER=6 -DKSEEK_FA_CLUSTER_MAX=60;clrel=\$cu -DKSEEK_FA_CLUSTER=6 -DKSEEK_FA_CLUSTER_ARRIVE=0\" 'grid_hd128_full_s4096*' 'grid_hd128_full_s16384*' 'grid_hd256_full*' 'gqa4_hd256_full*' 'ragged_s3001_hd128_full*' 'long_single*hd128_full*'")
mkdir -p /tmp/sass && tar -C /tmp/sass -xzf "$out/builds.tgz"
zcat /tmp/sass/builds/cl.sass.gz | awk '/Function : .*Li128ELi2ELi176ELi0ELi128ELb1ELi2E/{p=1} /Function : / && !/Li128ELi2ELi176ELi0ELi128ELb1ELi2E/{p=0} p' |
  grep -n 'SYNCS\|MEMBAR\|FENCE\|UBLKCP\|UTMALDG\|CCTL\|ERRBAR\|S2R\|S2UR' > "$out/cl_sass.txt"
zcat /tmp/sass/builds/clrel.sass.gz | awk '/Function : .*Li128ELi2ELi176ELi0ELi128ELb1ELi2E/{p=1} /Function : / && !/Li128ELi2ELi176ELi0ELi128ELb1ELi2E/{p=0} p' |
  grep -n 'SYNCS\|MEMBAR\|FENCE\|UBLKCP\|UTMALDG\|CCTL\|ERRBAR\|S2R\|S2UR' > "$out/clrel_sass.txt"
rm -f "$out/builds.tgz"
wc -l "$out"/*_sass.txt
