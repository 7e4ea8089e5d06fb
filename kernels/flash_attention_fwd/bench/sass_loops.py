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

    python3 sass_loops.py --waits [FILE] [--match REGEX] [--json]

With --waits, where ptxas put the WGMMA consumers' waits in each key-tile
loop (a loop that holds the backward branch of no other loop issuing
HGMMA, and waits both for S and for every wgmma group), as a sequence of
events: H<n> HGMMA with n columns (g: it closes a group), W<k>
WARPGROUP.DEPBAR.LE gsb0, k (wgmma.wait_group k), M FMNMX (the softmax's
row maxima), E MUFU.EX2 (its exponentials), S SYNCS (an mbarrier wait or
arrive), B BAR; a run of one event written as Ex12. Each step waits for S
(W1), runs the softmax and only then needs the previous tile's P V done
(W0): a loop where most FMNMX come after its last W0 is marked "P V wait
before the softmax" (the softmax no longer runs under P V: D = 192's
tail-shares instance, about 4% per key tile, NOTES.md v4g), and a loop
with spill instructions (STL, LDL) is marked with their count. FILE: the
SASS (plain or .gz; run_variants.sh keeps it per build as NAME.sass.gz),
else standard input.
"""
import argparse
import collections
import gzip
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


def unguarded(text):
    """An instruction without its guard predicate ("@!P0 BRA 0x10" ->
    "BRA 0x10")."""
    if text.startswith("@"):
        return text.split(None, 1)[1] if " " in text else ""
    return text


def opcode(text):
    t = unguarded(text)
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


def event(text):
    """The --waits event of one instruction, or None."""
    body = unguarded(text)
    op = body.split(None, 1)[0] if body else ""
    if op.startswith("HGMMA"):
        m = re.match(r"HGMMA\.\d+x(\d+)", op)
        return "H" + (m.group(1) if m else "") + ("g" if "gsb0" in body else "")
    if op.startswith("WARPGROUP.DEPBAR"):
        m = re.search(r"gsb0,\s*0x([0-9a-f]+)", body)
        return "W" + (str(int(m.group(1), 16)) if m else "?")
    for prefix, e in (("FMNMX", "M"), ("MUFU.EX2", "E"), ("SYNCS", "S"), ("BAR.", "B")):
        if op.startswith(prefix):
            return e
    return None


def compress(events):
    runs = []
    for e in events:
        if runs and runs[-1][0] == e:
            runs[-1][1] += 1
        else:
            runs.append([e, 1])
    return " ".join(e if n == 1 else f"{e}x{n}" for e, n in runs)


def key_tile_loops(insns):
    """[(start, end, events)] of the key-tile loops (--waits)."""
    events = [event(t) for _, t in insns]
    hgmma = [0]  # HGMMA before each index
    for e in events:
        hgmma.append(hgmma[-1] + (e is not None and e[0] == "H"))
    index = {a: i for i, (a, _) in enumerate(insns)}
    spans = [(index[s], index[e]) for s, e in loops(insns) if s in index]
    found = []
    for j, i in sorted(spans):
        if any(j <= i2 < i and hgmma[i2 + 1] > hgmma[j2] for j2, i2 in spans if i2 != i):
            continue
        body = [e for e in events[j:i + 1] if e]
        if "W1" in body and "W0" in body:
            spills = sum(opcode(t) in ("STL", "LDL") for _, t in insns[j:i + 1])
            found.append((insns[j][0], insns[i][0], body, spills))
    return found


def waits(funcs, names, chosen, as_json):
    """--waits: each key-tile loop's events and verdict; a kernel named by
    its demangled name without return type, namespace and parameters."""
    flagged = spilled = 0
    for m in chosen:
        short = re.match(r"(?:void )?(?:\(anonymous namespace\)::)?(\w+<.*?>)\(", names[m])
        label = short.group(1) if short else names[m]
        for start, end, events, spills in key_tile_loops(funcs[m]):
            last_w0 = max(k for k, e in enumerate(events) if e == "W0")
            maxima = [k for k, e in enumerate(events) if e == "M"]
            after = sum(k > last_w0 for k in maxima) / len(maxima) if maxima else None
            late = after is not None and after > 0.5
            flagged += late
            spilled += spills > 0
            if as_json:
                print(json.dumps({"kernel": label, "mangled": m, "start": hex(start),
                                  "end": hex(end), "events": compress(events),
                                  "maxima_after_w0": after, "pv_wait_before_softmax": late,
                                  "spill_instructions": spills}))
                continue
            share = "-" if after is None else f"{100 * after:.0f}%"
            print(f"{label} {hex(start)}-{hex(end)}: FMNMX after W0 {share}"
                  f"{'  ** P V wait before the softmax' if late else ''}"
                  f"{f'  ** {spills} spill instructions (STL/LDL)' if spills else ''}")
            print(f"    {compress(events)}")
    if not as_json:
        print(f"key-tile loops with the P V wait before the softmax: {flagged}")
        print(f"key-tile loops with spill instructions: {spilled}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass", nargs="?", help="cuobjdump -sass output, plain or .gz (default stdin)")
    ap.add_argument("--match", default=".", help="regex on the (demangled) function name")
    ap.add_argument("--top", type=int, default=3, help="loops per function (largest first)")
    ap.add_argument("--waits", action="store_true",
                    help="each key-tile loop's waits and softmax (below), not the opcodes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        if args.sass is None:
            funcs = parse(sys.stdin)
        else:
            with (gzip.open(args.sass, "rt", errors="replace") if args.sass.endswith(".gz")
                  else open(args.sass, errors="replace")) as f:
                funcs = parse(f)
    except OSError as e:
        sys.exit(f"sass_loops.py: cannot read {args.sass}: {e.strerror or e}")
    if not funcs:
        sys.exit("sass_loops.py: no functions in the input (is it cuobjdump -sass output?)")
    names = demangle(list(funcs))
    pattern = re.compile(args.match)
    chosen = [m for m in funcs if pattern.search(names[m])]
    if not chosen:
        sys.exit(f"sass_loops.py: no function matches {args.match!r} among {len(funcs)}")
    if args.waits:
        waits(funcs, names, chosen, args.json)
        return
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
