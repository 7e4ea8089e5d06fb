#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): the softmax
# without maxima on the tiles after an item's first (KSEEK_FA_SUM_CHECK,
# every WGMMA head dim), as an upper bound: build nr leaves out the
# recomputation of S on a failed test (KSEEK_FA_SC_NO_REISSUE), so it is
# wrong wherever the test fails (a row's P past 2^8 against its reference,
# or a row that has seen no key), which the task's normal(0, 1) inputs
# hardly reach; it times the path every tile takes on those inputs (no
# FMNMX, shuffle, alpha or O rescale per tile; the tile's K released after
# the P V wait).
#   def  the default
#   nr   -DKSEEK_FA_SUM_CHECK=15 -DKSEEK_FA_SC_NO_REISSUE
# Prediction: head_dim 64 (MUFU, tensor cores and issue all near their
# limits; about 1.5 of 6.75 instructions per score gone) gains most, if
# the issue slots are what the MUFU waits on; 256 and 192 gained 1.7% from
# the lazy rescale alone (v3l). ptxas puts about 16 of a tile's 64
# exponentials before the P V wait in nr (sass_check.sh), against 20-30 in
# the default: a loss there would show at 128.
# Measured (bench/results/sum_check_h100.txt, call 1): head_dim 64 +3-6%,
# 128 +1-2%, 96 +2-4%, 256 -2 to -4%, many-short -8% (4 wgmma
# serialisation warnings in head_dim 64's 64- and 80-key instances).
# A record, not a replay: call 1 ran a draft of the switch (every tile
# width, masked tiles too; nr's KSEEK_FA_SC_NO_REISSUE left out its slow
# path) that was not committed; since v4j the default has the switch on,
# and KSEEK_FA_SC_NO_REISSUE no longer exists, so today this plan times
# v4j against itself.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sum_check.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 12 --budget-s 0.2}"
run_plan "def=$cu;nr=$cu -DKSEEK_FA_SUM_CHECK=15 -DKSEEK_FA_SC_NO_REISSUE" \
  'grid_hd*_s512_bf16' 'grid_hd*_s2048_bf16' 'grid_hd*_s8192_bf16' \
  'long_single_s32768_h1_hd64_*' 'many_short_b512_s32_hd64*' 'gqa8_hd64_full_s2048_bf16' \
  'ragged_s1000_hd128_full_bf16' 'prefill_q256_k16384_hd64_full_bf16' 'dims_*hd96*'
