#!/usr/bin/env bash
# Clang's thread-safety analysis over every source of ours that holds a
# mutex: each such .cc (one that names absl::Mutex, or includes a header of
# ours that does) is
# compiled with clang -fsyntax-only -Wthread-safety -Werror, with the flags
# of the build (build/compile_commands.json; run after scripts/setup.sh).
# GCC, which builds the project, ignores the ABSL_GUARDED_BY and
# ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations; this is where they are checked.
# Exit status 0 when every file passes. KSEEK_CLANG names the compiler
# (default clang++).
set -euo pipefail
cd "$(dirname "$0")/.."
clang=${KSEEK_CLANG:-clang++}
db=build/compile_commands.json
[[ -f $db ]] || { echo "thread_safety: $db not found: build first (scripts/setup.sh)" >&2; exit 2; }
command -v "$clang" >/dev/null || { echo "thread_safety: $clang not found (scripts/setup.sh installs clang)" >&2; exit 2; }
python3 - "$clang" "$db" "${KSEEK_JOBS:-$(nproc)}" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys

clang, db, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
root = os.getcwd()
mutex = re.compile(r"absl::(Mutex|MutexLock|ReaderMutexLock|WriterMutexLock)\b")

# Our headers that name absl::Mutex, by path from the root.
headers = set()
for folder, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if not d.startswith((".", "build", "dist")) and d != "node_modules"]
    for name in files:
        path = os.path.join(folder, name)
        if name.endswith(".h") and mutex.search(open(path, errors="replace").read()):
            headers.add(os.path.relpath(path, root))
include = re.compile(r'^#include "([^"]+)"', re.M)

def holds_mutex(cc):
    text = open(cc, errors="replace").read()
    if mutex.search(text):
        return True
    return any(h == inc or h.endswith("/" + inc) for inc in include.findall(text) for h in headers)

def command(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    # Drop the launcher (ccache) and the compiler; keep defines, includes,
    # the language standard; drop GCC's warning set and the output.
    while args and not args[0].startswith("-") and not args[1].startswith("-"):
        args = args[1:]
    args = args[1:]
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or (a.startswith("-W") and not a.startswith("-Wl")) or a == "-w":
            continue
        if a == entry["file"] or a == os.path.relpath(entry["file"], entry["directory"]):
            continue
        out.append(a)
    return [clang, "-fsyntax-only", "-Wthread-safety", "-Werror"] + out + [entry["file"]]

entries = {}
for e in json.load(open(db)):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    e["file"] = f
    if not f.startswith(root + "/") or "/build" in f[len(root):] or not f.endswith(".cc"):
        continue
    if holds_mutex(f):
        entries.setdefault(f, e)

def check(e):
    r = subprocess.run(command(e), cwd=e["directory"], capture_output=True, text=True)
    return e["file"], r.returncode, r.stdout + r.stderr

failed = 0
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    for f, rc, out in pool.map(check, sorted(entries.values(), key=lambda e: e["file"])):
        rel = os.path.relpath(f, root)
        if rc == 0:
            print("thread_safety: %s ok" % rel)
        else:
            failed += 1
            print("thread_safety: %s FAILED\n%s" % (rel, out))
print("thread_safety: %d of %d files with a mutex pass" % (len(entries) - failed, len(entries)))
sys.exit(1 if failed else 0)
PY
