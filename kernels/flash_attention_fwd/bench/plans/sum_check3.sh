#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): v4j's losers
# against v4i (grid_hd64_full_s512 -2 to -4%, prefill_q333_k4097 hd128 -2 to
# -3%, qlong_q3001_k1000 hd128 causal -4%, ragged_s1000 hd128 causal -2%)
# beside winners as controls, to find what costs there:
#   def  v4j (KSEEK_FA_SUM_CHECK=3)
#   off  v4i (-DKSEEK_FA_SUM_CHECK=0)
#   ek   v4j with K (and Q) released right after S, before the test, as
#        v4i does: a copy of hopper.cu made here. A measuring build only:
#        its S again by mma.sync reads a stage the producer may refill,
#        which the task's inputs never reach (no sum is inf after the first
#        tile).
#   kg   the safe form of ek (-DKSEEK_FA_SC_K_GLOBAL=1): K released right
#        after S, S again reading K from global memory by plain loads
#        (Q released after the test, as in v4j); sass_check.sh finds small
#        spills in 44 of its key-tile loops (none in head_dim 64's
#        two-consumer ones).
#   er   v4j with -DKSEEK_FA_SC_EARLY_RELEASE=3: a warp whose test passed
#        releases K (and Q) right after it, before the wait for P V; one
#        whose test failed after its slow path (the release waits on the
#        test, so all 64 exponentials come first).
#   pin  v4j with -DKSEEK_FA_PIN_PV_WAIT=3: the running sums (updated
#        after the warp's test) stored where negative before the wait for
#        P V, so ptxas cannot sink the exponentials and the test below it
#        (sass_check.sh: in v4j it puts 9-16 of a tile's 64 exponentials
#        before that wait at head_dim 64 and 128).
# Prediction: if the late release is the cost, ek recovers the losers and
# keeps the winners (and er, unless the exponentials before the wait cost
# it); if the exponentials after the wait are, pin does.
# NOTES.md: "Where v4j's sum check costs" and the next list after it.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check3.sh
# Since v4l hopper.cu has no KSEEK_FA_SC_K_GLOBAL=1 (an #error) and its
# default is 2: to repeat this plan, run it at commit 3672bae.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
ek=$(mktemp -d)/early_k.cu
python3 - "$cu" "$ek" <<'PY' || exit 1
import sys
s = open(sys.argv[1]).read()
edits = [("          if constexpr (kKGlobal) release_k(true, true, false);",
          "          release_k(true);"),
         ("          release_k(!kEarlyRelease || !sum_ok, !kKGlobal, true);",
          "          release_k(false);")]
for old, new in edits:
    if s.count(old) != 1:
        sys.exit("sum_check3.sh: hopper.cu no longer has the text ek changes")
    s = s.replace(old, new)
open(sys.argv[2], "w").write(s)
PY
run_plan "def=$cu;off=$cu -DKSEEK_FA_SUM_CHECK=0;ek=$ek;kg=$cu -DKSEEK_FA_SC_K_GLOBAL=1;er=$cu -DKSEEK_FA_SC_EARLY_RELEASE=3;pin=$cu -DKSEEK_FA_PIN_PV_WAIT=3" \
  'grid_hd64_full_s512_*' 'grid_hd64_causal_s512_bf16' 'grid_hd64_full_s1024_bf16' 'prefill_q333_k4097_hd128_*' \
  'qlong_q3001_k1000_hd128_causal_bf16' 'ragged_s1000_hd128_causal_bf16' 'ragged_s100_hd128_full_bf16' \
  'grid_hd64_full_s8192_bf16' 'grid_hd128_causal_s8192_bf16' 'long_single_s32768_h1_hd64_full_bf16' \
  'grid_hd128_full_s1024_bf16' 'prefill_q256_k16384_hd128_full_bf16' 'gqa8_hd64_full_s2048_bf16' \
  'dims_hd96_full_s4096_bf16'
