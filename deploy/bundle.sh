#!/usr/bin/env bash
# Builds (or refreshes) the service binaries in build/ and writes a
# relocatable bundle: bin/ (kseek, kseek-runner, kseek-worker, kernelseekd),
# lib/ (every shared library they load that is not part of the C/C++
# runtime: gRPC, Protobuf, Abseil, RE2, c-ares, ...), include/kernelseek/
# (the candidate ABI header the compile driver finds at ../include) and a
# README. The binaries carry an RPATH of $ORIGIN/../lib (DT_RPATH, which
# also applies to the libraries' own dependencies) and each library one of
# $ORIGIN, so the folder runs anywhere, on a machine without gRPC, with no
# LD_LIBRARY_PATH. Then it checks that: ldd finds every library inside
# the bundle, and the binaries start with an empty environment.
#
# usage: deploy/bundle.sh [--build-dir DIR] [--out DIR] [--smoke]
#   --build-dir  build folder (default build/; configured if it is not)
#   --out        bundle folder (default dist/kernelseek-bundle; replaced)
#   --smoke      also start the bundled service (kseek up --gpus none) in a
#                temporary folder and evaluate a shipped host kernel through it
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
out=$root/dist/kernelseek-bundle
smoke=0
while (($#)); do
  case $1 in
    --build-dir) build=$(realpath -m "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --smoke) smoke=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
binaries=(kseek kseek-runner kseek-worker kernelseekd)
for tool in patchelf ldd strip; do
  command -v "$tool" >/dev/null || { echo "bundle: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" -j "${KSEEK_JOBS:-$(nproc)}" "${binaries[@]}"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/include"
for b in "${binaries[@]}"; do
  cp "$build/bin/$b" "$out/bin/$b"
done
cp -r "$root/harness/include/kernelseek" "$out/include/"

# The C and C++ runtime (glibc and its parts, libstdc++, libgcc_s) is on
# every system and must match its kernel and loader: it stays out.
runtime='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|libgcc_s|libstdc\+\+)\.so'
for b in "${binaries[@]}"; do
  ldd "$out/bin/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $runtime ]] && continue
  cp -L "$path" "$out/lib/$name"
done
chmod u+w "$out"/lib/* "$out"/bin/*
strip --strip-debug "$out"/bin/* "$out"/lib/*
for b in "${binaries[@]}"; do
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$out/bin/$b"
done
for l in "$out"/lib/*; do
  patchelf --force-rpath --set-rpath '$ORIGIN' "$l"
done

cat > "$out/README.md" <<'README'
# KernelSeek bundle

The KernelSeek binaries with the shared libraries they need, relocatable:
copy the folder anywhere (any x86-64 Linux with glibc 2.36 or newer) and
run `bin/kseek`. No LD_LIBRARY_PATH, no gRPC installed: the binaries find
`lib/` through their RPATH (`$ORIGIN/../lib`).

- `bin/kseek`: the command line (`bin/kseek help`).
- `bin/kernelseekd`: the coordinator; `bin/kseek-worker`: a worker;
  `bin/kseek-runner`: the isolated child a worker or `kseek eval --local`
  runs each scenario in (found beside them).
- `include/kernelseek/abi.h`: the candidate ABI; the compile driver finds it
  at `../include` from the binary.

On one machine: `bin/kseek up` (Ctrl-C stops it; `--detach` and
`bin/kseek down` for the background), then `bin/kseek eval --task DIR
KERNEL` in the same folder. Candidates are compiled on the worker's machine:
the host target needs a C++ compiler (`c++`), the GPU targets the CUDA
toolkit (`nvcc` 12.8 or newer for `sm_100a`) and a driver.
README

echo "bundle: checking $out"
status=0
for f in "$out"/bin/* "$out"/lib/*; do
  missing=$(env -i ldd "$f" 2>&1 | grep 'not found' || true)
  if [[ -n $missing ]]; then
    echo "bundle: $f: $missing" >&2
    status=1
  fi
done
# gRPC must come from the bundle, not from the system.
grpc_from=$(env -i ldd "$out/bin/kseek" | awk '$1 ~ /^libgrpc\+\+\.so/ {print $3}')
grpc_from=$(realpath -m "${grpc_from:-none}")
if [[ $grpc_from != "$out/lib/"* ]]; then
  echo "bundle: bin/kseek loads libgrpc++ from '$grpc_from', not from $out/lib" >&2
  status=1
fi
# Each binary starts with an empty environment (absl's --help exits 1 after
# printing its usage; only a loader failure or silence counts).
for b in kseek kernelseekd kseek-worker; do
  text=$(env -i "$out/bin/$b" --help 2>&1) || true
  if [[ -z $text || $text == *"error while loading"* ]]; then
    echo "bundle: bin/$b --help with an empty environment failed: $text" >&2
    status=1
  fi
done
((status == 0)) || exit 1

if ((smoke)); then
  work=$(mktemp -d)
  trap 'env -i PATH=/usr/bin:/bin HOME="$work" "$out/bin/kseek" down --state-dir "$work/.kernelseek" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  (
    cd "$work"
    run=(env -i PATH=/usr/bin:/bin HOME="$work")
    "${run[@]}" "$out/bin/kseek" up --detach --gpus none
    "${run[@]}" "$out/bin/kseek" eval --task "$root/kernels/softmax" --target host \
      "$root/kernels/softmax/fast_host.cc"
    "${run[@]}" "$out/bin/kseek" down
  )
fi
du -sh "$out" | awk -v out="$out" '{print "bundle: " $1 " in " out}'
