#!/usr/bin/env bash
# Installs KernelSeek's build and test dependencies (Debian 12 / Ubuntu 24.04)
# and builds everything into build/. Safe to re-run: apt and the build are
# incremental. Set KSEEK_SKIP_APT=1 to skip the package step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build ccache pkg-config
          libabsl-dev nlohmann-json3-dev libgtest-dev libgmock-dev libssl-dev
          libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
          libsqlite3-dev patchelf
          # the thread-safety check (scripts/thread_safety.sh): clang's analysis
          clang
          # deploy tests: a private single-node Slurm cluster, YAML manifests
          munge slurmctld slurmd slurm-client python3-yaml)
# agent tests: python3 runs the stand-in model server (tests/agent_standin/);
# confined agents: useradd/userdel (passwd) make each session's user, and the
# trust tests look for the processes an agent left with pgrep (procps)
packages+=(python3 passwd procps)
# report tests: zlib reads the PNG screenshots of the session report, which
# headless Chromium takes (Debian's package; Ubuntu ships Chromium only as a
# snap, and the browser test skips without it).
packages+=(zlib1g-dev)
if grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then packages+=(chromium); fi
# The agent CLIs below install through npm; a machine without node gets the
# distribution's.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

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

# The coding-agent CLIs that sessions run (server/agent/README.md), pinned,
# from npm into the global prefix so that `claude` and `codex` are on PATH.
# Skipped when they are already at these versions, or with
# KSEEK_SKIP_AGENT_CLIS=1. Without node and npm the agent end-to-end tests
# skip.
claude_version=2.1.332
codex_version=0.171.0
if [[ "${KSEEK_SKIP_AGENT_CLIS:-0}" != 1 ]]; then
  if command -v node >/dev/null && command -v npm >/dev/null; then
    if [[ "$(claude --version 2>/dev/null)" != "$claude_version (Claude Code)" ||
          "$(codex --version 2>/dev/null)" != "codex-cli $codex_version" ]]; then
      echo "setup: installing claude $claude_version and codex $codex_version from npm"
      sudo_cmd=()
      [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
      # Claude Code's postinstall puts its native binary in place.
      "${sudo_cmd[@]}" npm install -g --no-fund --no-audit --loglevel=error \
        --allow-scripts=@anthropic-ai/claude-code \
        "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version"
      claude --version && codex --version
    fi
  else
    echo "setup: node/npm not found; the agent CLIs are not installed (their tests skip)"
  fi
fi

# The Node.js client test (tests/node_client_e2e_test.cc): @grpc/grpc-js and
# @grpc/proto-loader from npm, as pinned by tests/node_client/package-lock.json.
# Without npm the test skips.
if command -v npm >/dev/null; then
  if [[ ! -f tests/node_client/node_modules/@grpc/grpc-js/package.json ]]; then
    echo "setup: installing the Node.js client test's packages from npm"
    npm ci --prefix tests/node_client --no-fund --no-audit --loglevel=error
  fi
fi

jobs=${KSEEK_JOBS:-$(nproc)}
# ccache: paths relative to the checkout, so another clone of the same code
# reuses the cache.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j "$jobs"
