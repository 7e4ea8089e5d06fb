#!/usr/bin/env bash
# One device call (about 250 s of wall time; no carry needed): why the
# instance that runs the tail's shares (kTailShares) walks its whole pairs'
# key tiles slower than the instance without them. tail_instance_cost.sh
# (v4g's session) measured its whole rounds' loop +1.8% per tile at
# head_dim 128 s16384 and s8192 (+2.6% in cycles), +1.2% at 256 and +4% at
# D = 192, while the two instances' inner loops in SASS differ only in a
# few integer instructions (the same HGMMA, barrier and wait sequence).
# The instance is 1.6x the other's size (head_dim 128: 6392 instructions
# against 3920; D = 192 7760 against 4848), so the suspect is the
# instruction cache. Nsight Compute (full set, source counters; stalls
# summed by reason by ncu_stalls.py) of:
#   ncu     def (v4g) on grid_hd128_full_s16384_bf16: the shares' instance
#   ncu_2   s0 (KSEEK_FA_TAIL_SPLIT=0) on the same: the plain instance
#   ncu_3   s14 (KSEEK_FA_TAIL_SPLIT=14) on dims_hd192_full_s16384_bf16
#   ncu_4   def on the same: D = 192's plain instance
# Prediction: the shares' instances show more "no_instruction" stall
# samples per instruction than the plain ones (an instruction-cache miss),
# about the per-tile difference; if not, the stall table that differs
# names the cause. The four details pages are packed into details.tgz.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tail_instance_profile.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
a=grid_hd128_full_s16384_bf16 b=dims_hd192_full_s16384_bf16
(run_profile "def=$cu;s0=$cu -DKSEEK_FA_TAIL_SPLIT=0;s14=$cu -DKSEEK_FA_TAIL_SPLIT=14" \
  "def $a;s0 $a;s14 $b;def $b")
rc=$?
out=${OUT:-/tmp/fa_variants}
rm -f "$out/builds.tgz" "$out/ncu_raw.tgz"
(cd "$out" && tar -czf details.tgz ./*_details.txt && rm -f ./*_details.txt)
exit $rc
