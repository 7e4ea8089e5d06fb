#!/usr/bin/env python3
"""A profiled kernel's stall samples by basic block and by loop.

Reads the CSV of Nsight Compute's source page with SASS (what
run_variants.sh keeps as ncu/*_source.csv.gz in $OUT/ncu_raw.tgz), cuts
the code into basic blocks at branches and branch targets, and prints
for each block that holds at least MIN_SHARE percent of the samples: its
address range, instructions, executed warp-level instructions, samples,
the leading stall reasons and the block's landmarks (HGMMA, wgmma waits,
mbarrier waits and arrivals, named barriers, MUFU, stores). Then the
loops (backward branches) with the samples inside each. Two kernels read
this way side by side show which part of an item one of them spends
more in, and waiting for what.

  python3 ncu_regions.py ncu_source.csv.gz [MIN_SHARE]
"""

import collections
import re
import sys

from ncu_stalls import SAMPLES, opcode, source_table

EXECUTED = "Instructions Executed"


def full_opcode(sass):
    """The opcode with its modifiers, without a predicate: "@!P0
    WARPGROUP.DEPBAR.LE gsb0, 0x1" -> "WARPGROUP.DEPBAR.LE" (opcode()
    keeps only "WARPGROUP")."""
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else "?"


def landmark(op):
    """A short name for instructions that mark where in an item a block
    is, or None."""
    base = op.split(".")[0]
    if base == "HGMMA":
        return "HGMMA"
    if base == "WARPGROUP":
        return op  # WARPGROUP.DEPBAR.LE / ARRIVE
    if base == "SYNCS":
        return ".".join(op.split(".")[:3])
    if base in ("BAR", "MUFU", "STG", "STS", "UTMASTG", "UTMALDG", "UBLKCP",
                "SHFL", "LDSM", "STSM", "WARPSYNC", "NANOSLEEP", "SETMAXNREG",
                "ATOMG", "RED", "EXIT"):
        return base
    return None


def read(path):
    rows, col, reasons = source_table(path)
    code = []
    for r in rows:
        try:
            addr = int(r[col["Address"]], 16)
        except ValueError:
            continue
        code.append({
            "addr": addr,
            "sass": r[col["Source"]].strip(),
            "samples": int(r[col[SAMPLES]] or 0),
            "executed": int(r[col[EXECUTED]] or 0) if EXECUTED in col else 0,
            "by": {c[6:]: int(r[col[c]] or 0) for c in reasons},
        })
    code.sort(key=lambda x: x["addr"])
    return code


def branch_target(ins, addrs, base):
    """The address a branch goes to, when the SASS names one we know
    (absolute, or relative to the function's first instruction)."""
    op = opcode(ins["sass"])
    if op not in ("BRA", "BRX", "JMP", "CALL", "BSSY", "WARPSYNC"):
        return None
    for tok in re.findall(r"0x[0-9a-fA-F]+", ins["sass"]):
        v = int(tok, 16)
        if v in addrs:
            return v
        if v + base in addrs:
            return v + base
    return None


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1].strip())
    min_share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    code = read(sys.argv[1])
    if not code:
        raise SystemExit(f"{sys.argv[1]}: no instructions")
    addrs = {c["addr"] for c in code}
    base = code[0]["addr"]
    starts = {base}
    loops = []
    for i, ins in enumerate(code):
        t = branch_target(ins, addrs, base)
        op = opcode(ins["sass"])
        if t is not None and op != "WARPSYNC":
            starts.add(t)
            if t <= ins["addr"] and op == "BRA":
                loops.append((t, ins["addr"]))
        if op in ("BRA", "BRX", "JMP", "EXIT", "RET") and i + 1 < len(code):
            starts.add(code[i + 1]["addr"])
    total = sum(c["samples"] for c in code) or 1
    executed = sum(c["executed"] for c in code) or 1
    print(f"{sys.argv[1]}: {len(code)} instructions, {executed / 1e6:.2f} M "
          f"executed, {total} stall samples; blocks with >= {min_share}% of "
          "the samples (offsets from the first instruction):")
    print(f"{'from':>6s} {'to':>6s} {'ins':>4s} {'exec M':>7s} {'samples':>8s} "
          f"{'share':>6s}  reasons / landmarks")
    blocks = []
    for ins in code:
        if ins["addr"] in starts or not blocks:
            blocks.append([])
        blocks[-1].append(ins)
    shown = 0
    for b in blocks:
        s = sum(c["samples"] for c in b)
        if 100 * s / total < min_share:
            continue
        shown += s
        by = collections.Counter()
        marks = collections.Counter()
        for c in b:
            by.update(c["by"])
            m = landmark(full_opcode(c["sass"]))
            if m:
                marks[m] += 1
        why = ", ".join(f"{k}={v}" for k, v in by.most_common(3) if v)
        mark = " ".join(f"{k}x{v}" if v > 1 else k for k, v in marks.items())
        ex = sum(c["executed"] for c in b)
        print(f"{b[0]['addr'] - base:6x} {b[-1]['addr'] - base:6x} {len(b):4d} "
              f"{ex / 1e6:7.3f} {s:8d} {100 * s / total:5.1f}%  {why}")
        if mark:
            print(f"{'':36s}[{mark}]")
    print(f"shown: {100 * shown / total:.1f}% of the samples")
    if loops:
        print("\nloops (backward branches, 0.1% of the samples or more; samples and "
              "executed instructions inside):")
        for t, a in sorted(set(loops)):
            inside = [c for c in code if t <= c["addr"] <= a]
            # A branch back from code placed past the exit (the compiler's
            # outlined paths) is not a loop.
            if any(opcode(c["sass"]) == "EXIT" for c in inside):
                continue
            s = sum(c["samples"] for c in inside)
            if 100 * s / total < 0.1:  # polling loops that never wait
                continue
            ex = sum(c["executed"] for c in inside)
            hg = sum(1 for c in inside if opcode(c["sass"]) == "HGMMA")
            print(f"  {t - base:6x}-{a - base:6x}: {len(inside):5d} ins, "
                  f"{hg:3d} HGMMA, {ex / 1e6:7.2f} M executed, {s:8d} samples "
                  f"({100 * s / total:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
