#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): does the
# instance that runs the tail's shares (kTailShares, KSEEK_FA_TAIL_SPLIT)
# pay for them in its whole items' key tiles? D = 192's trace
# (bench/results/d192_tail_trace_h100.txt) put its whole 147-tile rounds at
# 1.713 us per tile in that instance against 1.648 us without the shares
# (+4%, no spills either way by ptxas), so that the shares lost there; if
# head_dim 128's 176-key tiles and head_dim 256's pay the same, the rows
# that take the shares gain less than they could.
#   tr    -DKSEEK_FA_TRACE=1 (v4g: the shares at head_dim 128 and 256)
#   tr0   -DKSEEK_FA_TRACE=1 -DKSEEK_FA_TAIL_SPLIT=0 (no shares instance)
#   def   the default (v4g)
#   s0    -DKSEEK_FA_TAIL_SPLIT=0
#   s14   -DKSEEK_FA_TAIL_SPLIT=14 (D = 192's shares too; for its SASS)
# Traced: grid head_dim 128 s16384 and s8192 and head_dim 256 s16384
# (non-causal, bf16). Then the SASS of the cluster instances with and
# without the shares (head_dim 128's 176-key tiles, D = 192, head_dim 256;
# bf16) from def and s14, as $OUT/sass_tail.txt.gz, in place of the
# builds' archive (too large to come back).
# Prediction: tr0's whole rounds cost the same per key tile as tr's at
# head_dim 128 and 256 (their shares gained 1.2-1.9% in v4e); if tr's
# cost more, the instance's code (not the shares' work) is the cause at
# D = 192 too, and the SASS shows where.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/tail_instance_cost.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
item_trace_of tr,tr0 grid_hd128_full_s16384_bf16,grid_hd128_full_s8192_bf16,grid_hd256_full_s16384_bf16 \
  "--bins 10"
(run_plan "tr=$cu -DKSEEK_FA_TRACE=1;tr0=$cu -DKSEEK_FA_TRACE=1 -DKSEEK_FA_TAIL_SPLIT=0;def=$cu;s0=$cu -DKSEEK_FA_TAIL_SPLIT=0;s14=$cu -DKSEEK_FA_TAIL_SPLIT=14" \
  'grid_hd128_full_s*_bf16' 'grid_hd256_full_s*_bf16' 'dims_hd192_full_s16384_bf16')
rc=$?
# The SASS of the six cluster instances, from the builds' archive.
if [[ -f $OUT/builds.tgz ]]; then
  tmp=$(mktemp -d)
  tar -C "$tmp" -xzf "$OUT/builds.tgz" --wildcards '*def.sass.gz' '*s14.sass.gz' 2> /dev/null
  pattern='AttentionForwardWgmmaI13__nv_bfloat16Li(128ELi2ELi176ELi0ELi128|192ELi2ELi0ELi0ELi192|256ELi2ELi0ELi0ELi256)ELb1ELi2ELb[01]E'
  for b in def s14; do
    f=$(find "$tmp" -name "$b.sass.gz" | head -1)
    [[ -n $f ]] || { echo "no SASS of $b"; continue; }
    echo "== $b"
    zcat "$f" | awk -v pat="$pattern" '
      /Function : / { keep = ($0 ~ pat) }
      keep { print }'
  done | gzip > "$OUT/sass_tail.txt.gz"
  rm -rf "$tmp" "$OUT/builds.tgz"
fi
exit $rc
