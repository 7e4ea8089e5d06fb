#!/usr/bin/env python3
"""Where the warps of a profiled kernel wait, from Nsight Compute's source page.

Reads the CSV that `ncu -i REPORT --page source --csv --print-source sass`
writes (gzip or plain; run_variants.sh leaves it as $OUT/ncu_source.csv.gz
when FA_NCU is set) and prints the warp-stall samples summed by reason,
the SASS instructions with the most samples and their top reasons, and
the executed (warp-level) instructions summed by opcode: two kernels'
opcode sums side by side show where one executes more.

  python3 ncu_stalls.py ncu_source.csv.gz [TOP]
"""

import collections
import csv
import gzip
import sys


def open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def opcode(sass):
    """The opcode of a SASS line without predicate or modifiers: "@!P0 BRA
    0x10" -> "BRA", "HGMMA.64x128x16.F32" -> "HGMMA"."""
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


# The source page's column of stall samples per instruction.
SAMPLES = "Warp Stall Sampling (All Samples)"


def source_table(path):
    """The source page's instruction rows, its columns by name and its
    stall-reason columns (ncu_regions.py reads the page the same way)."""
    with open_text(path) as f:
        rows = list(csv.reader(f))
    # The header is the first row that names the sampling column.
    head_at = next((i for i, r in enumerate(rows) if SAMPLES in r), None)
    if head_at is None:
        raise SystemExit(f"{path}: no '{SAMPLES}' column: not a source page "
                         "with SASS?")
    head = rows[head_at]
    col = {h: i for i, h in enumerate(head)}
    reasons = [h for h in head
               if h.startswith("stall_") and "Not Issued" not in h]
    return [r for r in rows[head_at + 1:] if len(r) >= len(head)], col, reasons


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1].strip())
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rows, col, reasons = source_table(sys.argv[1])
    total = collections.Counter()
    executed = collections.Counter()
    lines = []
    for r in rows:
        samples = int(r[col[SAMPLES]] or 0)
        by = {c: int(r[col[c]] or 0) for c in reasons}
        total.update(by)
        lines.append((samples, r[col.get("Address", 0)],
                      r[col.get("Source", 0)].strip(), by))
        if "Instructions Executed" in col:
            executed[opcode(r[col["Source"]])] += int(
                r[col["Instructions Executed"]] or 0)
    all_samples = sum(total.values()) or 1
    print(f"stall samples: {all_samples}")
    for reason, n in total.most_common(12):
        print(f"  {reason[6:]:26s} {n:9d} {100 * n / all_samples:5.1f}%")
    print(f"\ntop {top} instructions (samples, share, address, SASS, reasons):")
    for samples, addr, src, by in sorted(lines, key=lambda x: -x[0])[:top]:
        why = ", ".join(f"{k[6:]}={v}" for k, v in
                        sorted(by.items(), key=lambda kv: -kv[1])[:3] if v)
        print(f"{samples:8d} {100 * samples / all_samples:5.1f}% {addr[-5:]:>5s} "
              f"{src[:64]:64s} {why}")
    if executed:
        all_executed = sum(executed.values()) or 1
        print(f"\nexecuted instructions: {all_executed / 1e6:.2f} M; by opcode (M, share):")
        for op, n in executed.most_common(24):
            print(f"  {op:14s} {n / 1e6:8.2f} {100 * n / all_executed:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
