#!/usr/bin/env bash
# CPU emulation of hopper.cu against an fp64 reference (no GPU needed).
#
#   bash tests/hopper_emu/run.sh [FILTER] [--shard=I/N] [--plant=NAME] [-DNAME=VALUE ...]
#
# Builds hopper.cu with emulated PTX (WGMMA with the descriptors and
# 128-byte swizzle hopper_wgmma_probe.cu confirmed on the device, TMA 4-D
# boxes with zero fill, mbarriers with transaction bytes, named barriers,
# setmaxnreg as no-ops, ldmatrix/mma.sync, cp.async, clusters with TMA
# multicast) and runs each shape of emu_main.cc twice: asynchronous work
# completing at issue ("eager") and only at the waits ("lazy"), so a read
# before its wait shows. FILTER keeps
# the shapes whose name contains it, --shard=I/N the I-th of every N of
# those; -D flags set hopper.cu's switches and --plant one of transform.py's
# planted bugs. HOPPER_CU names another kernel file (default:
# kernels/flash_attention_fwd/hopper.cu). The build makes the configurations
# the tests run as build/bin/hopper_emu_* (tests/hopper_emu/CMakeLists.txt);
# this script is for any other. Exit status 0 when all pass. The emulation
# is not the hardware: the device run decides.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${EMU_BUILD_DIR:-$(mktemp -d)}"
mkdir -p "$build"
transform_args=()
run_args=()
for arg in "$@"; do
  case $arg in
    -D*|--plant=*) transform_args+=("$arg") ;;
    *) run_args+=("$arg") ;;
  esac
done
python3 "$here/transform.py" "${HOPPER_CU:-$root/kernels/flash_attention_fwd/hopper.cu}" \
  "$here/emu_wrappers.inc" "$here/emu_wgmma.inc" "$build/hopper_emu.inc" "${transform_args[@]}"
# -U_FORTIFY_SOURCE: the fibers switch stacks with _longjmp (emu.h).
g++ -std=c++17 -O2 -w -Wno-psabi -U_FORTIFY_SOURCE -I "$here" -I "$build" -I "$root/harness/include" \
  -o "$build/emu_test" "$here/emu_main.cc"
"$build/emu_test" "${run_args[@]}"
