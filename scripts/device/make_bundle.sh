#!/usr/bin/env bash
# Packs build/bin (binaries and test executables), the non-system shared
# libraries they load, and the ABI header into .device/, a folder that runs
# on a GPU machine without our build dependencies (Abseil, ...). The
# binaries find their libraries through LD_LIBRARY_PATH, set by the scripts
# that run there (gpu_suite.sh). KSEEK_DEVICE_BINS (names, space-separated;
# kseek brings kseek-runner, which its eval needs)
# packs only those binaries, to keep a device call's upload small.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.device
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/include"
if [[ -n ${KSEEK_DEVICE_BINS:-} ]]; then
  bins=" $KSEEK_DEVICE_BINS "
  # kseek eval runs each candidate in kseek-runner: never one without the other.
  [[ $bins == *" kseek "* && $bins != *" kseek-runner "* ]] && bins+="kseek-runner "
  for b in $bins; do cp "build/bin/$b" "$out/bin/"; done
else
  cp build/bin/* "$out/bin/"
fi
strip --strip-debug "$out"/bin/*
cp -r harness/include/kernelseek "$out/include/"
# Libraries that a stock Ubuntu/Debian system has are left out.
system_libs='^(linux-vdso|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux|libcrypto|libssl|libz)[.-]'
for f in "$out"/bin/*; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $system_libs ]] && continue
    cp -n "$path" "$out/lib/" 2>/dev/null || true
  done
done
du -sh "$out" | awk '{print "bundle: " $1 " in .device/"}'
