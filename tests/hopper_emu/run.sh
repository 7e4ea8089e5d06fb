#!/usr/bin/env bash
# CPU emulation of hopper.cu against an fp64 reference (no GPU needed).
#
#   bash tests/hopper_emu/run.sh [FILTER] [-DNAME=VALUE ...]
#
# Builds hopper.cu with emulated PTX (WGMMA with the descriptors and
# 128-byte swizzle hopper_wgmma_probe.cu confirmed on the device, TMA 4-D
# boxes with zero fill, mbarriers with transaction bytes, named barriers,
# setmaxnreg as no-ops, ldmatrix/mma.sync, cp.async) and runs each shape
# of emu_main.cc twice: asynchronous work completing at issue ("eager") and
# only at the waits ("lazy"), so a read before its wait shows. FILTER keeps
# the shapes whose name contains it; -D flags set hopper.cu's switches.
# HOPPER_CU names another kernel file (default: kernels/flash_attention_fwd/hopper.cu).
# Takes about 4 minutes for all shapes on 2 cores. Exit status 0 when all
# pass. The emulation is not the hardware: the device run decides.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${EMU_BUILD_DIR:-$(mktemp -d)}"
filter=""
defines=()
for arg in "$@"; do
  case $arg in
    -D*) defines+=("$arg") ;;
    *) filter=$arg ;;
  esac
done
python3 "$here/transform.py" "${HOPPER_CU:-$root/kernels/flash_attention_fwd/hopper.cu}" \
  "$here/emu_wrappers.inc" "$here/emu_wgmma.inc" "$build/hopper_emu.inc" "${defines[@]}"
g++ -std=c++17 -O1 -w -I "$here" -I "$build" -I "$root/harness/include" \
  -o "$build/emu_test" "$here/emu_main.cc"
"$build/emu_test" $filter
