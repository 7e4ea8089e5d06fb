#!/usr/bin/env bash
# One device call (about 480 s of the 600 a call may take): the two plans
# written after v3y, each into a folder of its own under $OUT, 7 files in
# all (a call returns 8), so that one call answers both when the device
# is lent for few calls:
#   $OUT/decode  decode_stages.sh (about 300 s; stopped at 330): the
#                decode kernel's long splits with deeper rings or 8 warps,
#                the block-per-row combine from 5 splits, two equal
#                builds' spread, the timeline, ncu (its pages packed into
#                ncu_pages.tgz)
#   $OUT/mask    mask_relative.sh (about 170 s; stopped at 230): the
#                WGMMA kernels' mask against the row's limit less the
#                lane's first key, on the 112 causal scenarios but decode
# Run from the repository root (.anchors carried, for the timeline's FA3):
#   bash kernels/flash_attention_fwd/bench/plans/after_v3y.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-/tmp/fa_after_v3y}
mkdir -p "$out/decode" "$out/mask"
OUT=$out/decode timeout 330 bash "$here/decode_stages.sh"
echo "== decode_stages.sh: exit $?"
( cd "$out/decode" &&
  { ! compgen -G 'ncu_*.txt' > /dev/null || { tar -czf ncu_pages.tgz ncu_*.txt && rm -f ncu_*.txt; }; }
  rm -f builds.tgz timeline.json )
OUT=$out/mask timeout 230 bash "$here/mask_relative.sh"
echo "== mask_relative.sh: exit $?"
rm -f "$out/mask/builds.tgz"
ls -R "$out"
