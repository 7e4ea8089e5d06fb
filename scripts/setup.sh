#!/usr/bin/env bash
# Installs KernelSeek's build and test dependencies (Debian 12 / Ubuntu 24.04)
# and builds everything into build/. Safe to re-run: apt and the build are
# incremental. Set KSEEK_SKIP_APT=1 to skip the package step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build ccache pkg-config
          libabsl-dev nlohmann-json3-dev libgtest-dev libgmock-dev libssl-dev
          libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
          libsqlite3-dev patchelf)

if [[ "${KSEEK_SKIP_APT:-0}" != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
  fi
fi

jobs=${KSEEK_JOBS:-$(nproc)}
# ccache: paths relative to the checkout, so another clone of the same code
# reuses the cache.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j "$jobs"
