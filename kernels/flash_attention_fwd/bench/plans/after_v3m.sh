#!/usr/bin/env bash
# One device call (about 330 s; carry .anchors), the first after v3m:
#   pdl/     bench/plans/pdl_dims.sh (the default KSEEK_FA_PDL=11 against
#            no programmatic launch, and one-tile GQA decode on the decode
#            kernel from 2 splits) on the prefill and decode scenarios
#   hd256/   Nsight Compute, the default's WGMMA kernel and FA3's on
#            grid_hd256_full_s512_bf16 (v3m: 0.934x FA3), per-instruction
#            CSVs kept
#   hd128/   the same on grid_hd128_full_s1024_bf16 (v3m: 0.95x FA3)
# Each profile's directory comes back as one archive (the device returns
# at most 8 files): hd256.tgz, hd128.tgz with the details pages, the
# stall tables and ncu_raw.tgz (per-instruction CSVs).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/after_v3m.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
plans=kernels/flash_attention_fwd/bench/plans
cu=kernels/flash_attention_fwd/hopper.cu
(OUT=$OUT/pdl bash $plans/pdl_dims.sh) > "$OUT/pdl.log" 2>&1
echo "== pdl_dims: exit $?"; tail -60 "$OUT/pdl.log"
for scen in grid_hd256_full_s512_bf16 grid_hd128_full_s1024_bf16; do
  tag=$(sed -E 's/grid_(hd[0-9]+)_.*/\1/' <<< "$scen")
  (source $plans/run_plan.sh && OUT=$OUT/$tag run_profile "def=$cu" "def $scen" "$scen") \
    > "$OUT/$tag.log" 2>&1
  echo "== profile $scen: exit $?"; tail -40 "$OUT/$tag.log"
  rm -f "$OUT/$tag/builds.tgz"
  tar -C "$OUT" -czf "$OUT/$tag.tgz" "$tag" && rm -rf "${OUT:?}/$tag"
done
rm -f "$OUT/pdl/builds.tgz"
ls -la "$OUT" "$OUT/pdl"
