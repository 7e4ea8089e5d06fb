#!/usr/bin/env bash
# Benchmarks the evaluation service on loopback: starts kernelseekd and host
# kseek-workers from an existing build, runs kseek-service-bench against
# them, and stops them on exit. Builds nothing.
#
#   overhead    the same host evaluation (softmax, one small scenario,
#               timing disabled, compile cached) N times directly against an
#               unregistered worker and through the coordinator (to its one
#               registered worker), interleaved
#   throughput  M evaluations submitted at once through the coordinator,
#               with 1 host worker and then with 2
#   latency     (--latency: this phase alone) cheap RPCs (ListWorkers,
#               GetEvaluation) p50/p99 idle and during a burst of B
#               submissions, with 1 host worker
#
# usage: scripts/bench_service.sh [--build-dir build] [--n 20] [--m 20] [--json]
#                                 [--latency [--burst 1000]]
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
n=20
m=20
burst=1000
latency=0
json=()
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --m) m=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --latency) latency=1; shift ;;
    --json) json=(--json); shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--n N] [--m M] [--json] [--latency [--burst B]]" >&2; exit 2 ;;
  esac
done
bin=$build/bin
for b in kernelseekd kseek-worker kseek-runner kseek-service-bench; do
  [[ -x $bin/$b ]] || { echo "$bin/$b: missing; build it first" >&2; exit 2; }
done

tmp=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Starts a process with stdout to $tmp/NAME.out and stderr to $tmp/NAME.err,
# then sets `address` from its first stdout line, "listening on ADDR".
address=
start() {
  local name=$1
  shift
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  local pid=$!
  for _ in $(seq 300); do
    if [[ -s $tmp/$name.out ]] && read -r line <"$tmp/$name.out" && [[ $line == "listening on "* ]]; then
      address=${line#listening on }
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name did not start; its stderr:" >&2
  cat "$tmp/$name.err" >&2
  exit 1
}

start kernelseekd "$bin/kernelseekd" --listen 127.0.0.1:0 --state-dir "$tmp/state"
coordinator=$address
start worker1 "$bin/kseek-worker" --listen 127.0.0.1:0 --coordinator "$coordinator" \
  --target host --token-file "$tmp/state/worker.token" --cache-dir "$tmp/cache"
# The direct path gets a worker of its own, registered nowhere: direct jobs
# on a registered worker would make the coordinator see it busy until its
# next heartbeat, which is not what a client of the coordinator pays. It
# runs jobs for the holder of its job credential file.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$tmp/direct.credential"
chmod 600 "$tmp/direct.credential"
start direct "$bin/kseek-worker" --listen 127.0.0.1:0 --target host --cache-dir "$tmp/cache" \
  --job-credential-file "$tmp/direct.credential"
direct=$address

bench=("$bin/kseek-service-bench" --coordinator "$coordinator"
  --token-file "$tmp/state/admin.token" --task kernels/softmax
  --kernel kernels/softmax/fast_host.cc --scenario r64_c33_f32_host "${json[@]}")
if ((latency)); then
  "${bench[@]}" --phase latency --burst "$burst" --wait-workers 1
  exit 0
fi
overhead=$("${bench[@]}" --phase overhead --worker "$direct" \
  --job-credential-file "$tmp/direct.credential" --n "$n")
one=$("${bench[@]}" --phase throughput --m "$m" --wait-workers 1)
start worker2 "$bin/kseek-worker" --listen 127.0.0.1:0 --coordinator "$coordinator" \
  --target host --token-file "$tmp/state/worker.token" --cache-dir "$tmp/cache"
two=$("${bench[@]}" --phase throughput --m "$m" --wait-workers 2)

if ((${#json[@]})); then
  printf '{"overhead":%s,"throughput_1_worker":%s,"throughput_2_workers":%s}\n' \
    "$overhead" "$one" "$two"
else
  printf '%s\n%s\n%s\n' "$overhead" "$one" "$two"
fi
