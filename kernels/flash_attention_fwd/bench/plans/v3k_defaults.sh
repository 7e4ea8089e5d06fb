#!/usr/bin/env bash
# One device call (about 200 s): v3k's defaults (TMA stores, fast epilogue
# and locate at head_dim 64 and 128, 2 Q buffers at head_dim 128 with few
# keys, 2 K/V stages on the causal head_dim 128 kernel) beside v3j's file,
# and one more length rule:
#   v3j   v3j's hopper.cu (carry .variants: git show ef7c6dd:kernels/flash_attention_fwd/hopper.cu > .variants/hopper_v3j.cu)
#   v3k   the default build
#   q4k   2 Q buffers at head_dim 128 without causal masking up to 4096 keys
# on the epilogue plan's scenarios and the head_dim 256 many-short ones.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/v3k_defaults.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
cu=kernels/flash_attention_fwd/hopper.cu
export FA_VARIANTS="v3j=.variants/hopper_v3j.cu;v3k=$cu;q4k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=4096"
export FA_SCENARIOS=$(python3 - <<'PY'
import json
t = json.load(open("kernels/flash_attention_fwd/task.json"))["scenarios"]
hd = lambda n: "hd64" in n or "hd128" in n
keep = lambda n: (n.startswith("grid_")
                  or (n.startswith("qlong_") and "hd128" in n)
                  or (n.startswith(("gqa", "mqa")) and hd(n))
                  or n.startswith("many_short_")
                  or (n.startswith("dims_") and ("hd80" in n or "hd96" in n)))
print(",".join(s["name"] for s in t if keep(s["name"])))
PY
)
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-500}"
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
