#!/usr/bin/env bash
# One device call (about 500 s from cold; carry .device and .anchors):
# profile_causal2.sh with PROFILE_FA3=1 (Nsight Compute of FA3's forward
# kernel and the default's WGMMA kernel on grid_hd128_causal_s16384, their
# stalls by instruction; power.py on three grid shapes), then
# decode_flush.sh's two equal builds over the 48 decode scenarios with the
# L2 flush by reads and again by writes (the default), in that order, so
# that both flushes are read in one session on one machine (FLUSH_MODES,
# default "read write", to run fewer). Into $OUT:
# profile.log, ncu_stalls.txt, ncu_fa3_stalls.txt, ncu_fa3_details.txt,
# flush_read.log, flush_write.log and extra.tgz (power.txt, the default's
# ncu_details.txt, the profile's rest.tgz, both flushes' variants.json).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/fa3_profile_and_flush.sh
set -uo pipefail
final=${OUT:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
extra=$(mktemp -d)
prof=$(mktemp -d)
OUT=$prof PROFILE_FA3=1 timeout 300 bash "$here/profile_causal2.sh"
echo "== profile_causal2.sh exit $?"
mv "$prof/plan.log" "$final/profile.log" 2>/dev/null
for f in ncu_stalls.txt ncu_fa3_stalls.txt ncu_fa3_details.txt; do
  [[ -f $prof/$f ]] && mv "$prof/$f" "$final/"
done
mv "$prof"/* "$extra/" 2>/dev/null
for mode in ${FLUSH_MODES:-read write}; do
  tmp=$(mktemp -d)
  OUT=$tmp FA_VARIANTS_TIMEOUT=200 FA_VARIANT_ARGS="--samples 10 --budget-s 0.12 --flush $mode" \
    bash "$here/decode_flush.sh" > "$final/flush_$mode.log" 2>&1
  echo "== flush $mode exit $?"
  [[ -f $tmp/variants.json ]] && cp "$tmp/variants.json" "$extra/flush_$mode.json"
done
tar -czf "$final/extra.tgz" -C "$extra" .
