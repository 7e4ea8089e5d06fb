#!/usr/bin/env bash
# One device call (about 150 s): GQA decode at head_dim <= 128 on the
# decode kernel's long splits where version 1 splits the keys fewer than
# 12 ways (KSEEK_FA_DECODE_GQA_MIN_SPLITS; v3g measured the decode kernel
# 2-10% slower there, before the combine was launched as a programmatic
# dependent), beside the default:
#   def    the default (version 1 below 12 splits)
#   dr2    the decode kernel from 2 splits of version 1
#   dr6    from 6
# on the decode scenarios.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_route.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;dr2=$cu -DKSEEK_FA_DECODE_GQA_MIN_SPLITS=2;dr6=$cu -DKSEEK_FA_DECODE_GQA_MIN_SPLITS=6" \
  'decode_*'
