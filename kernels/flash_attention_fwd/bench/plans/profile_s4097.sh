#!/usr/bin/env bash
# One device call (about 150 s of wall time; carry .anchors): Nsight
# Compute on ragged_s4097_hd128_full_bf16, v4c's WGMMA kernel beside FA3's
# forward kernel, no timing table. The row trails FA3 by 2% (0.980 in
# v4c's final run, bench/results/hopper_v4c_h100.txt) and not by the tile
# choice: the two-Q-buffer kernel's 160-key tiles measured 2.5% slower
# there (q2_upto.sh, NOTES.md "After v4c, on the device"). 4097 rows make
# 33 query tiles per head, 528 items = 4 x 132 exactly, 16 of them of one
# row that still sweep all 4097 keys; FA3 has the same items. What to
# read: duration, SM cycles and clock of each (a lower clock is energy
# per FLOP: NOTES.md "After v3n"), the grid each launches (ours clusters
# only with an even number of query tiles per head, as NOTES.md v3o read
# FA3's launch code: 33 is odd, so neither should cluster here; the grid
# shows it), L2 and DRAM throughput, and by
# ncu_regions.py the masked last tile against FA3's peeled first one.
# Then the same on grid_hd128_full_s4096_bf16 (even tiles, both cluster)
# as the control.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/profile_s4097.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
a=ragged_s4097_hd128_full_bf16
b=grid_hd128_full_s4096_bf16
run_profile "v4c=$cu" "v4c $a;v4c $b" "$a;$b"
