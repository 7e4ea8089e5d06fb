#!/usr/bin/env bash
# One device call (about 60 s; carry .anchors and .sass_in): the loops of
# our WGMMA kernels and FA3's forward kernels by instruction class
# (bench/sass_loops.py on cuobjdump -sass), for counting the softmax's
# instructions per tile side by side: head_dim 64 (ours three consumers,
# 128-key tiles; FA3 192 x 192 without causal masking, 192 x 128 with)
# and head_dim 128 (ours 176-key tiles; FA3 128 x 176; under causal
# masking both 128 x 128). Ours from $SASS_CUBIN (default
# .sass_in/hopper.cubin: nvcc -cubin of hopper.cu with the harness's flags,
# built on the development machine: the device has cuobjdump, it does
# not), FA3 from .anchors/fa3's library. Summaries to stdout, every
# matching function in full (JSON) under $OUT.
# Before the call, here (about 3 minutes on two cores):
#   mkdir -p .sass_in && nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -O3 \
#     -std=c++17 -lineinfo --expt-relaxed-constexpr -I harness/include \
#     -o .sass_in/hopper.cubin kernels/flash_attention_fwd/hopper.cu
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/sass_loops.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
out=${OUT:-/tmp/sass_loops}
mkdir -p "$out"
tool=kernels/flash_attention_fwd/bench/sass_loops.py
dump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
cubin=${SASS_CUBIN:-.sass_in/hopper.cubin}
ours='AttentionForwardWgmma<__nv_bfloat16, (64, 3|128, 2, 176|128, 2, 128, 2, 128)'
fa3='(?=.*cutlass::bfloat16_t)FlashAttnFwdSm90.*cute::C<(192>, cute::C<192>, cute::C<64|192>, cute::C<128>, cute::C<64|128>, cute::C<176>, cute::C<128|128>, cute::C<128>, cute::C<128)>'
echo "== ours: $ours"
"$dump" -sass "$cubin" > "$out/ours.sass" 2>&1
python3 "$tool" --match "$ours" --top 4 < "$out/ours.sass"
python3 "$tool" --match "$ours" --top 4 --json < "$out/ours.sass" > "$out/ours_loops.json"
echo "== FA3: $fa3"
xz -dc .anchors/fa3/*.so.xz > "$out/fa3.so"
"$dump" -sass "$out/fa3.so" > "$out/fa3.sass" 2>&1
python3 "$tool" --match "$fa3" --top 4 < "$out/fa3.sass" | cut -c1-600
python3 "$tool" --match "$fa3" --top 4 --json < "$out/fa3.sass" > "$out/fa3_loops.json"
gzip -9 "$out/ours.sass" "$out/fa3.sass"
rm -f "$out/fa3.so"
ls -la "$out"
