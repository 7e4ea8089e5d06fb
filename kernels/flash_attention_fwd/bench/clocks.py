#!/usr/bin/env python3
"""The SM clock around each backend's timed call, in the flushed timing.

Under the board's power limit a kernel that spends less energy per FLOP
runs at a higher clock (power.py, back to back). The flushed timing of
anchor.py and variants.py runs each call after an L2 flush and a GPU spin
(the pad); there the board may or may not be at its limit, and two
backends with the same cycles can differ in time only by their clocks.
This script times like kseek_abi.Timer (warm-up, then per sample: flush,
pad, events around one call; backends interleaved, the order rotating,
the median), and per sample also reads the clock twice with the spin
itself (torch.cuda._sleep counts SM cycles): over the pad before the call
(its cycles over its event time) and over a probe spin of --probe-us
right after the call (the clock the call ended at). Prints per scenario
and backend the median time, TFLOP/s, both clocks (MHz, medians) and the
TFLOP/s per GHz of the clock after the call: equal per-GHz figures with
unequal times say the clock made the difference, not the work.

  python3 clocks.py --lib def=/tmp/a.so [--lib x=/tmp/b.so] [--fa3 DIR] \\
      --scenarios grid_hd128_full_s1024_bf16,... [--samples 30]
"""

import argparse
import statistics
import sys

import torch

from kseek_abi import Timer
from power import add_backend_arguments, each_scenario, load_backends


def timed_with_clocks(timer, fns, samples, warmup, probe_cycles):
    """{name: (median ms, median MHz over the pad, median MHz after)}."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    names = list(fns)
    got = {n: ([], [], []) for n in names}
    for rnd in range(samples):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for name in order:
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            timer.flush_buf.zero_()
            ev[0].record()
            torch.cuda._sleep(timer.pad_cycles)
            ev[1].record()
            fns[name]()
            ev[2].record()
            torch.cuda._sleep(probe_cycles)
            ev[3].record()
            ev[3].synchronize()
            pad_us = ev[0].elapsed_time(ev[1]) * 1e3
            probe_us = ev[2].elapsed_time(ev[3]) * 1e3
            got[name][0].append(ev[1].elapsed_time(ev[2]))
            got[name][1].append(timer.pad_cycles / pad_us if timer.pad_cycles else float("nan"))
            got[name][2].append(probe_cycles / probe_us)
    return {n: tuple(statistics.median(x) for x in got[n]) for n in names}


def add_clock_arguments(ap):
    """The timing options of the clocked timing (clocks.py, item_costs.py)."""
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--pad-us", type=float, default=Timer.DEFAULT_PAD_US)
    ap.add_argument("--probe-us", type=float, default=200.0)


def clocked_timing(args):
    """A function fns -> timed_with_clocks(...) under args' options."""
    timer = Timer(args.samples, args.warmup, 1e9, args.pad_us)
    probe_cycles = int(args.probe_us * timer.cycles_per_us)
    return lambda fns: timed_with_clocks(timer, fns, args.samples, args.warmup,
                                         probe_cycles)


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    add_backend_arguments(ap)
    add_clock_arguments(ap)
    args = ap.parse_args()
    builds, fa3 = load_backends(args)
    timed = clocked_timing(args)
    print(f"device {torch.cuda.get_device_name(0)}; flushed timing, {args.pad_us:g} us "
          f"pad, {args.samples} samples each, interleaved; MHz over the pad "
          f"(before) and over a {args.probe_us:g} us spin right after the call")
    print(f"{'scenario':40s} {'backend':8s} {'ms':>9s} {'TFLOP/s':>8s} {'MHz before':>10s} "
          f"{'MHz after':>9s} {'TFLOP/s/GHz':>11s}")
    for s, fl, fns in each_scenario(args, builds, fa3, "fa3_s1"):
        res = timed(fns)
        for name, (ms, before, after) in res.items():
            tf = fl / (ms * 1e-3) / 1e12
            print(f"{s['name']:40s} {name:8s} {ms:9.4f} {tf:8.1f} {before:10.0f} "
                  f"{after:9.0f} {tf / (after / 1e3):11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
