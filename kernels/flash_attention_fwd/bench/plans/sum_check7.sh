#!/usr/bin/env bash
# One short device call (about 150 s of wall time; no carry needed): v4k
# beside KSEEK_FA_SC_K_GLOBAL=2 in its rotation form (each pass moves the
# key blocks before it down by one; sum_check6.sh timed the select form)
# on six of sum_check6.sh's rows: one-tile items, heads1, head_dim 96
# s1024, the 160-key tail instance (grid hd128 full s2048) and two grid
# rows where v4k won.
# Never run: v4l's final run measured the rotation form instead
# (bench/results/hopper_v4l_h100.txt, moved.txt against v4k's run), and
# since v4l the default is kg2, so at 7f5e25c or later its two builds are
# one; run it at commit 3672bae for v4k beside kg2.
# NOTES.md: "v4k" and the next list after it.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check7.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 16 --budget-s 0.3}"
run_plan "def=$cu;kg2=$cu -DKSEEK_FA_SC_K_GLOBAL=2" \
  'ragged_s100_hd128_full_bf16' 'heads1_b8_s2048_hd128_full_bf16' 'dims_hd96_full_s1024_bf16' \
  'grid_hd128_full_s2048_bf16' 'grid_hd128_full_s8192_bf16' 'grid_hd64_full_s512_bf16'
