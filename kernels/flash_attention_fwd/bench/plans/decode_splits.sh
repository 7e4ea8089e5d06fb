#!/usr/bin/env bash
# One device call (about 150 s): the mma.sync kernels' key splits at the
# best wave efficiency instead of the fewest splits within 85% of it
# (NOTES.md v3k, "Device plan"), beside the default build:
#   lk  the decode kernel's long splits (GQA decode, one block per SM)
#       only: decode_b16_k4096_gqa16_hd128 7 -> 8 splits (112 -> 128
#       blocks), decode_b4_k16384_gqa4_hd128 the same
#   sk  every mma.sync and decode split
# on the decode, many-short and prefill scenarios (the shapes that reach
# the mma.sync kernels).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_splits.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
cu=kernels/flash_attention_fwd/hopper.cu
export FA_VARIANTS="a=$cu;lk=$cu -DKSEEK_FA_LONG_SPLIT_KEEP_PCT=100;sk=$cu -DKSEEK_FA_SPLIT_KEEP_PCT=100 -DKSEEK_FA_LONG_SPLIT_KEEP_PCT=100"
export FA_SCENARIOS=$(python3 - <<'PY'
import json
t = json.load(open("kernels/flash_attention_fwd/task.json"))["scenarios"]
keep = lambda n: n.startswith(("decode_", "many_short_", "prefill_"))
print(",".join(s["name"] for s in t if keep(s["name"])))
PY
)
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
