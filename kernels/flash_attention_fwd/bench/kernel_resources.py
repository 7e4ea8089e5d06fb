#!/usr/bin/env python3
"""Registers, stack, spills and shared memory of every kernel in hopper.cu.

Needs no GPU. It compiles the file with the harness's flags (`kseek compile
--target sm_90a --json`), reads ptxas's report for each entry function
(registers, barriers, stack frame, spill stores and loads), and gets each
kernel's dynamic shared memory from the kernel's own constants: a small host
program that includes the file prints WgmmaConfig<D, NC, BN, QB>::kSmemBytes,
Config<D>::kSmemBytes and DecodeConfig<D, R>::kSmemBytes for the instances
ptxas named (built by nvcc to PTX only, about 40 s here). CombineSplits
takes kCombineWarps * D * 4 bytes when a row's splits are shared among
warps, none otherwise. Instances that differ only in the element type (f16,
bf16) and agree in every figure are one line.

  python3 kernels/flash_attention_fwd/bench/kernel_resources.py [--json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(KERNEL_DIR))


TYPE_NAMES = {"__half": "f16", "__nv_bfloat16": "bf16"}


def numeric_key(args):
    """Template arguments sorted as numbers where they are numbers."""
    return tuple((0, int(a), "") if re.fullmatch(r"-?\d+", a) else (1, 0, a) for a in args)


def entries(log):
    """(mangled name, {registers, barriers, stack, spill_stores, spill_loads})."""
    out = []
    current = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = {"registers": 0, "barriers": 0, "stack": 0, "spill_stores": 0,
                       "spill_loads": 0}
            out.append((m.group(1), current))
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            current["barriers"] = int(b.group(1)) if b else 0
    return out


def split_args(text):
    """Top-level comma-separated template arguments."""
    args, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return args


def parse(demangled):
    """(kernel name, [template arguments]) of a demangled entry."""
    text = demangled.replace("(anonymous namespace)::", "")
    text = re.sub(r"^void ", "", text)
    m = re.match(r"(\w+)<(.*)>\(", text)
    if not m:
        return text.split("(")[0], []
    return m.group(1), split_args(m.group(2))


def smem_expression(name, args):
    """The C++ expression of the instance's dynamic shared memory, or None."""
    ints = args[1:]  # after the element type
    if name == "AttentionForwardWgmma" and len(ints) >= 4:
        d, nc, bn, qb = ints[:4]
        return f"WgmmaConfig<{d}, {nc}, {bn}, {qb}>::kSmemBytes"
    if name == "AttentionForward" and ints:
        return f"Config<{ints[0]}>::kSmemBytes"
    if name == "AttentionDecode" and len(ints) >= 2:
        return f"DecodeConfig<{ints[0]}, {ints[1]}>::kSmemBytes"
    if name == "CombineSplits" and ints:
        return f"kCombineWarps * {ints[0]} * 4"
    return None


def shared_bytes(kernel, expressions, nvcc):
    """{expression: bytes}, from a host program that includes the kernel."""
    if not expressions:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "print_smem.cu")
        with open(src, "w") as f:
            f.write(f'#include "{kernel}"\n#include <cstdio>\nint main() {{\n')
            for i, e in enumerate(expressions):
                f.write(f'  std::printf("{i} %d\\n", int({e}));\n')
            f.write("  return 0;\n}\n")
        exe = os.path.join(tmp, "print_smem")
        cmd = [nvcc, "-std=c++17", "--expt-relaxed-constexpr",
               "-I" + os.path.join(ROOT, "harness", "include"), "-I" + KERNEL_DIR,
               "-gencode", "arch=compute_90a,code=compute_90a", "-o", exe, src]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("kernel_resources: building the shared-memory printer failed:\n" +
                     r.stderr[-2000:])
        r = subprocess.run([exe], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("kernel_resources: the shared-memory printer failed: " + r.stderr[-500:])
        values = {}
        for line in r.stdout.splitlines():
            i, v = line.split()
            values[expressions[int(i)]] = int(v)
        return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default=os.path.join(KERNEL_DIR, "hopper.cu"))
    ap.add_argument("--kseek", default=os.path.join(ROOT, "build", "bin", "kseek"))
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--json", action="store_true", help="one JSON object per kernel line")
    a = ap.parse_args()
    r = subprocess.run([a.kseek, "compile", "--target", "sm_90a", "--json", a.kernel],
                       capture_output=True, text=True)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        sys.exit(f"kernel_resources: kseek compile failed: {(r.stdout + r.stderr)[-2000:]}")
    if not report.get("ok", False):
        sys.exit("kernel_resources: kseek compile failed:\n" + report.get("log", "")[-2000:])
    found = entries(report.get("log", ""))
    names = subprocess.run(["c++filt"], input="\n".join(n for n, _ in found),
                           capture_output=True, text=True).stdout.splitlines()
    rows = []
    for (_, figures), demangled in zip(found, names):
        name, args = parse(demangled)
        rows.append({"kernel": name, "type": args[0] if args else "",
                     "args": args[1:], "expr": smem_expression(name, args), **figures})
    exprs = sorted({row["expr"] for row in rows if row["expr"]})
    values = shared_bytes(os.path.abspath(a.kernel), exprs, a.nvcc)
    for row in rows:
        row["dynamic_smem"] = values.get(row["expr"])
    # One line per instance but the element type, where both types agree.
    merged = {}
    for row in rows:
        key = (row["kernel"], tuple(row["args"]), row["registers"], row["barriers"], row["stack"],
               row["spill_stores"], row["spill_loads"], row["dynamic_smem"])
        merged.setdefault(key, []).append(TYPE_NAMES.get(row["type"], row["type"]))
    lines = []
    for key, types in sorted(merged.items(), key=lambda kv: (kv[0][0], numeric_key(kv[0][1]))):
        kernel, args, regs, bars, stack, st, ld, smem = key
        lines.append({"kernel": kernel, "template": list(args), "types": sorted(types),
                      "registers": regs, "barriers": bars, "stack": stack,
                      "spill_stores": st, "spill_loads": ld, "dynamic_smem": smem})
    if a.json:
        for line in lines:
            print(json.dumps(line))
        return
    print(f"{len(rows)} kernels in {os.path.relpath(a.kernel, ROOT)} (sm_90a, the harness's flags). "
          "Registers at launch: the WGMMA kernels then move them with setmaxnreg (producer 24, "
          "consumers 240, or 160 with three). Dynamic shared memory from the kernel's constants "
          "(CombineSplits: when a row's splits are shared among warps, else none).")
    print(f"{'kernel<template arguments after the element type>':58} {'types':9} {'regs':>4} "
          f"{'bars':>4} {'stack':>5} {'spills st/ld':>12} {'dyn. smem B':>11}")
    for line in lines:
        label = f"{line['kernel']}<{', '.join(line['template'])}>"
        smem = "-" if line["dynamic_smem"] is None else str(line["dynamic_smem"])
        spills = f"{line['spill_stores']}/{line['spill_loads']}"
        print(f"{label:58} {'/'.join(line['types']):9} {line['registers']:>4} "
              f"{line['barriers']:>4} {line['stack']:>5} {spills:>12} {smem:>11}")


if __name__ == "__main__":
    main()
