#!/usr/bin/env python3
"""The loops of compiled kernels, instruction by instruction class.

    cuobjdump -sass FILE | python3 sass_loops.py [--match REGEX] [--top N] [--json]

Reads `cuobjdump -sass` output (a cubin, a shared library or an
executable), takes the functions whose name (demangled with c++filt where
it is on PATH, else as written) matches REGEX, and for each prints its
instruction count and its N largest loops: the address range from a
backward branch's target to the branch, the instructions in it and their
opcodes by count (the opcode without its modifiers: FFMA.FTZ counts as
FFMA), the barrier and wait instructions named. Nested loops are
reported each on its own. --json prints the same as one JSON object.
Meant for comparing the softmax's instructions per tile of two kernels
(NOTES.md: at head_dim 64 each extra instruction per score costs about
5%).
"""
import argparse
import collections
import json
import re
import shutil
import subprocess
import sys

FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?);")
BRANCH_TARGET = re.compile(r"\b(?:BRA|BRX|JMP)\b[^;]*?(0x[0-9a-f]+)")


def demangle(names):
    if not names or shutil.which("c++filt") is None:
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                         text=True, check=False).stdout.splitlines()
    if len(out) != len(names):
        return {n: n for n in names}
    return dict(zip(names, out))


def parse(lines):
    """{mangled name: [(address, text)]} in file order."""
    funcs, cur = {}, None
    for line in lines:
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = INSN.match(line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2).strip()))
    return funcs


def opcode(text):
    t = text
    if t.startswith("@"):
        t = t.split(None, 1)[1] if " " in t else ""
    return t.split(None, 1)[0].split(".")[0] if t else "?"


def loops(insns):
    """Backward branches as (start, end) address ranges, largest first."""
    found = set()
    for addr, text in insns:
        m = BRANCH_TARGET.search(text)
        if m:
            target = int(m.group(1), 16)
            if target <= addr:
                found.add((target, addr))
    return sorted(found, key=lambda r: r[0] - r[1])


def summarise(name, insns, top):
    result = {"function": name, "instructions": len(insns), "loops": []}
    for start, end in loops(insns)[:top]:
        body = [t for a, t in insns if start <= a <= end]
        ops = collections.Counter(opcode(t) for t in body)
        result["loops"].append({
            "start": hex(start), "end": hex(end), "instructions": len(body),
            "opcodes": dict(ops.most_common()),
        })
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--match", default=".", help="regex on the (demangled) function name")
    ap.add_argument("--top", type=int, default=3, help="loops per function (largest first)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    funcs = parse(sys.stdin)
    if not funcs:
        sys.exit("sass_loops.py: no functions in the input (is it cuobjdump -sass output?)")
    names = demangle(list(funcs))
    pattern = re.compile(args.match)
    chosen = [m for m in funcs if pattern.search(names[m])]
    if not chosen:
        sys.exit(f"sass_loops.py: no function matches {args.match!r} among {len(funcs)}")
    results = [summarise(names[m], funcs[m], args.top) for m in chosen]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for r in results:
        print(f"== {r['function'][:400]}")
        print(f"   {r['instructions']} instructions, {len(r['loops'])} largest loops:")
        for lp in r["loops"]:
            ops = ", ".join(f"{k} {v}" for k, v in lp["opcodes"].items())
            print(f"   loop {lp['start']}-{lp['end']}: {lp['instructions']} instructions: {ops}")


if __name__ == "__main__":
    main()
