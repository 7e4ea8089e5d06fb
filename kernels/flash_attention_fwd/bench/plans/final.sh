#!/usr/bin/env bash
# One device call (about 420 s of wall time; carry .device and .anchors):
# the final run of hopper.cu as it is (run_plan.sh final_plan and
# final_run: kseek eval of every scenario and the extra ones without
# timing, the anchor beside FA3, cuDNN and FA2 by events and then, for the
# calls under 150 us, by the GPU's timeline; the pad sweep) into $OUT, its
# log $OUT/final.log; then tests/fa_streams/streams_check.cu on the same
# file (calls on four streams at once and from a graph, against the same
# calls made alone; about 20 s more) into $OUT/streams.txt; the GPU's
# bf16 matmul rate and copy bandwidth before and after the run
# (bench/ceilings.py, about 10 s) into $OUT/ceilings.txt; the anchor table
# row by row against the last final run on the same GPU kind
# (bench/compare_runs.py --moved; FINAL_COMPARE names another results
# file) into $OUT/moved.txt. The final runs since v3p
# (bench/results/hopper_v3*_h200.txt, hopper_v4_h200.txt).
# Since v4e the compile alone takes about 2 minutes: with
# FINAL_HARNESS_JSON (eval_candidate.sh's harness.json for the same PTX,
# carried too) the kseek evals are skipped (run_plan.sh final_run). With
# FA_DEFINES (as eval_candidate.sh's) the run is of a candidate default:
# hopper.cu with those switches set by #define lines at its top
# (run_plan.sh candidate_kernel), its eval included, in one call where
# they fit (v4f's compile, eval and anchor: about 360 s with
# FINAL_ANCHOR_TIMEOUT=535); bench/ptx_same.sh then shows the default set
# in the file the same PTX.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/final.sh
#   FINAL_HARNESS_JSON=.devout/v4e_eval/harness.json bash kernels/flash_attention_fwd/bench/plans/final.sh
#   FA_DEFINES="KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=4096 KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS=4096" \
#     FINAL_ANCHOR_TIMEOUT=535 bash kernels/flash_attention_fwd/bench/plans/final.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
final_plan
