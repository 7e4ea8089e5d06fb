#!/usr/bin/env bash
# One device call (about 200 s from cold): the 48 decode scenarios timed
# with the L2 flush by reads (bench/kseek_abi.py's Timer, --flush read, new:
# L2 left holding clean lines) instead of writes (the default: L2 left
# dirty, so a call's misses write those lines back to DRAM while it runs),
# two equal builds beside cuDNN, 10 samples each:
#   def, def2   the default, twice
# Why: a decode call reads 17-537 MB of K/V, and after the default flush
# up to the L2's size of dirty lines goes back to DRAM during it: as much
# as the call's own bytes on the shortest shapes. Equal builds moved up to
# 12% on one decode shape (b1_k32768_gqa8_hd96, about 10 us) and
# decode_b4_k16384_gqa8_hd128 read 0.897-0.967x cuDNN in five runs of the
# same code. Compare with the same two builds under the default flush in
# the same session (FA_VARIANT_ARGS without --flush read; v3y's def and
# def2 rows in call 1 of bench/results/hopper_after_v3y_variants_h200.txt):
# if the spread of equal builds and the run-to-run dips shrink with clean
# lines, the write-backs are part of the noise (every backend pays them;
# the question is which flush the anchor should use, NOTES.md "After v3y,
# without the device again").
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_flush.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12 --flush read}"
decode_plan "def=$cu;def2=$cu"
