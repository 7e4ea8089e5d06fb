#!/usr/bin/env bash
# One device call (carry .anchors and .device): the timing table of
# hd256_switches.sh ($OUT/switches/variants.txt, .json; about 150 s), then
# either
#   - where kf (the one-Q-buffer kernels' first K before Q) ran at least
#     0.5% faster than the default over its scenarios and no class of them
#     under 0.995x: the final run (scripts/device/full_run.sh, phase
#     anchor with kseek eval of all scenarios and the extra ones, about
#     320 s) of hopper.cu with KSEEK_FA_K_FIRST=14 defined ($OUT/final/),
#   - else the profiles of profile_hd128_hd256.sh (profile.tgz,
#     ncu_raw.tgz; about 150 s).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/after_v3n.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../../.." && pwd)
final=${OUT:-/tmp/fa_variants}
(OUT=$final/switches bash "$here/hd256_switches.sh") > "$final/switches.log" 2>&1
rm -f "$final/switches/builds.tgz"
tail -40 "$final/switches.log"
if python3 - "$final/switches/variants.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
kf = d["summary"].get("kf", {})
s = kf.get("over_first") or 0
cls = [v.get("kf") for k, v in d.get("by_class", {}).items()
       if not k.startswith("seqlen_k")]
low = min([c for c in cls if isinstance(c, (int, float))] or [0])
wrong = kf.get("wrong_or_failed", 1)
print(f"kf over def: {s:.4f}; lowest class or head dim {low:.4f}; wrong {wrong}")
sys.exit(0 if s >= 1.005 and low >= 0.995 and wrong == 0 else 1)
PY
then
  echo "== kf kept: the final run with KSEEK_FA_K_FIRST=14"
  mkdir -p "$root/.kf"
  { echo "#define KSEEK_FA_K_FIRST 14"; cat "$root/kernels/flash_attention_fwd/hopper.cu"; } > "$root/.kf/hopper.cu"
  OUT=$final/final final_run .kf/hopper.cu "$final/final.log"
  tail -30 "$final/final.log"
else
  echo "== kf not kept: the profiles"
  (OUT=$final bash "$here/profile_hd128_hd256.sh") > "$final/profile.log" 2>&1
  tail -30 "$final/profile.log"
fi
