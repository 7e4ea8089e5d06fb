#!/usr/bin/env python3
"""Sustained speed, SM clock and board power of several builds, FA3 and cuDNN.

The GPU runs under its power limit at the shapes that matter here: its
clock falls until the board's draw fits, so a kernel that spends more
energy per FLOP runs at a lower clock with the same cycles. Nsight
Compute shows the clock per profile but not why it differs; this script
runs each backend back to back on one scenario for --seconds (no L2
flush: the steady state of a long training step), samples nvidia-smi
every 50 ms meanwhile, and prints per backend the sustained TFLOP/s, the
mean SM clock and power over the run's second half, the energy per
PFLOP (J) and the TFLOP/s per GHz of clock. Backends in turn, each run twice (A B C A B C) so that a drift
of the board's temperature shows as the two runs of one backend
disagreeing.

  python3 power.py --lib def=/tmp/a.so [--lib x=/tmp/b.so] [--fa3 DIR] \\
      --scenarios grid_hd128_full_s1024_bf16,... [--seconds 2.5]
"""

import argparse
import os
import subprocess
import sys
import time

import torch

from anchor import fa3_callable, load_fa3, sdpa_callable
from kseek_abi import Kernel, flops, load_scenarios, make_inputs, select
from torch.nn.attention import SDPBackend


def add_backend_arguments(ap):
    """The options naming the builds, FA3 and the scenarios (power.py,
    clocks.py)."""
    ap.add_argument("--lib", action="append", required=True,
                    help="NAME=PATH of a build (several)")
    ap.add_argument("--fa3", default=os.environ.get("FA3_HOPPER"),
                    help="FA3's unpacked hopper/ folder; without it FA3 is left out")
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("--seed", type=int, default=1234)


def load_backends(args):
    """The builds [(name, Kernel)] and FA3 (None without --fa3) of args."""
    torch.set_grad_enabled(False)
    builds = [(n, Kernel(p)) for n, p in (x.split("=", 1) for x in args.lib)]
    return builds, load_fa3(args.fa3) if args.fa3 else None


def each_scenario(args, builds, fa3, fa3_name="fa3", scenarios=None, fa3_auto_name=None):
    """Per scenario of args.scenarios (task.json's names), or of scenarios
    ({"name", "params"} dicts) where given: (scenario, its FLOPs, the
    ready callables of ready_callables on fresh inputs), refusals printed;
    the inputs freed before the next."""
    if scenarios is None:
        scenarios = select(load_scenarios(), args.scenarios, False)
    for s in scenarios:
        p = s["params"]
        tensors = make_inputs(p, args.seed)
        fns = ready_callables(builds, fa3, p, tensors,
                              lambda n, e: print(f"{s['name']}: {n} refused: {e}"),
                              fa3_name, fa3_auto_name)
        yield s, flops(p), fns
        del tensors, fns
        torch.cuda.empty_cache()


def ready_callables(builds, fa3, p, tensors, refused, fa3_name="fa3", fa3_auto_name=None):
    """{backend: callable} of the builds [(name, Kernel)], FA3 (num_splits
    1, as fa3_name, and with fa3_auto_name also num_splits 0, its own
    choice, as that; where loaded) and cuDNN on scenario params p, each
    called once; a backend whose first call raises is left out and named
    to refused(name, first line of the error)."""
    q, k, v = tensors[:3]
    fns = {n: b.bind(p, tensors) for n, b in builds}
    if fa3 is not None:
        fns[fa3_name] = fa3_callable(fa3, p, q, k, v, 1)
        if fa3_auto_name:
            fns[fa3_auto_name] = fa3_callable(fa3, p, q, k, v, 0)
    fns["cudnn"] = sdpa_callable(SDPBackend.CUDNN_ATTENTION, p, q, k, v)
    for name in list(fns):
        try:
            fns[name]()
            torch.cuda.synchronize()
        except Exception as e:  # a refusal is a result
            refused(name, str(e).splitlines()[0])
            del fns[name]
    return fns


def sample_gpu():
    """Starts nvidia-smi sampling SM clock (MHz) and power (W) every 50 ms;
    returns the process (its stdout the samples, one "t,clock,power" line
    each)."""
    return subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
         "--format=csv,noheader,nounits", "-lms", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def run_backend(fn, seconds, fl):
    """Runs fn back to back for `seconds` under nvidia-smi; returns
    (TFLOP/s over the second half, mean clock MHz, mean power W)."""
    torch.cuda.synchronize()
    smi = sample_gpu()
    time.sleep(0.2)
    start = time.time()
    # Calls in batches between events: the second half's events give the
    # steady-state rate.
    marks = []
    while time.time() - start < seconds:
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(20):
            fn()
        e1.record()
        e1.synchronize()
        marks.append((time.time() - start, e0, e1, 20))
    smi.terminate()
    out, _ = smi.communicate()
    half = [m for m in marks if m[0] >= seconds / 2] or marks
    ms = sum(m[1].elapsed_time(m[2]) for m in half)
    calls = sum(m[3] for m in half)
    tflops = fl * calls / (ms * 1e-3) / 1e12
    rows = []
    for line in out.strip().splitlines():
        parts = [x.strip() for x in line.split(",")]
        try:
            rows.append((float(parts[1]), float(parts[2])))
        except (ValueError, IndexError):
            continue
    # The samples of the second half (nvidia-smi's lines are evenly spaced).
    tail = rows[len(rows) // 2:] or rows
    clock = sum(r[0] for r in tail) / max(1, len(tail))
    power = sum(r[1] for r in tail) / max(1, len(tail))
    return tflops, clock, power


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    add_backend_arguments(ap)
    ap.add_argument("--seconds", type=float, default=2.5)
    args = ap.parse_args()
    builds, fa3 = load_backends(args)
    print(f"device {torch.cuda.get_device_name(0)}; {args.seconds:g} s per run, "
          "back to back without L2 flush; clock and power: mean of nvidia-smi's "
          "samples over each run's second half")
    for s, fl, fns in each_scenario(args, builds, fa3):
        print(f"\n{s['name']}")
        print(f"  {'backend':10s} {'run':>3s} {'TFLOP/s':>8s} {'MHz':>6s} "
              f"{'W':>6s} {'J/PFLOP':>8s} {'TFLOP/s/GHz':>11s}")
        for rnd in (1, 2):
            for name, fn in fns.items():
                try:
                    t, c, w = run_backend(fn, args.seconds, fl)
                except Exception as e:  # a refusal is a result
                    print(f"  {name:10s} {rnd:3d} error: {str(e).splitlines()[0]}")
                    continue
                print(f"  {name:10s} {rnd:3d} {t:8.1f} {c:6.0f} {w:6.1f} "
                      f"{w / t * 1e3:8.1f} {t / (c / 1e3):11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
