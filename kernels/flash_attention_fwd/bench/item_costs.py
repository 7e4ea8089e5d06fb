#!/usr/bin/env python3
"""An item's fixed cost and its cost per key, per backend, at the boost clock.

Times (as clocks.py: flushed, padded, interleaved, the SM clock read by
the spin right after each call) one family of shapes whose query tiles
stay the same and whose keys grow: batch x heads x ceil(seqlen_q / 128)
items of 128 query rows, seqlen_k from the list. Per backend and shape it
prints the SM cycles per item (time x clock x SMs / items: the average
share of one SM an item takes, the clock the one the call ended at), then
a least-squares line through them against seqlen_k: its intercept is the
item's fixed cost in cycles (Q in, the first S and the last P V not
overlapped, the epilogue, the turn barriers), its slope the cost of 128
keys, beside the tensor cores' bound (4 x 128 x 128 x head_dim FLOPs per
128 keys at 4,096 dense FLOPs per SM and cycle). A backend whose tiles
pad the keys differently (FA3's 176-key tiles at head_dim 128) shows it
as steps around its line: read the points, not only the fit.

run_variants.sh's FA_ITEM_COSTS step calls it through with_fa3, whose
SCENARIOS argument arrives as --scenarios: here the seqlen_k values.

  python3 item_costs.py --lib def=/tmp/a.so [--fa3 DIR] \\
      --scenarios 256,384,512,1024 [--head-dims 64,128,256] [--causal] \\
      [--batch 64 --heads 16 --seqlen-q 256] [--samples 30]
"""

import argparse
import sys

import torch

from clocks import add_clock_arguments, clocked_timing
from power import add_backend_arguments, each_scenario, load_backends

DENSE_FLOPS_PER_SM_CYCLE = 4096  # bf16/f16 wgmma, Hopper


def line(xs, ys):
    """(intercept, slope) of the least-squares line through (xs, ys)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    add_backend_arguments(ap)  # --scenarios: the seqlen_k values, comma-separated
    add_clock_arguments(ap)
    ap.add_argument("--head-dims", default="128")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seqlen-q", type=int, default=256)
    args = ap.parse_args()
    try:
        keys = [int(x) for x in args.scenarios.split(",") if x]
        dims = [int(x) for x in args.head_dims.split(",") if x]
    except ValueError as e:
        ap.error(f"--scenarios and --head-dims take integers: {e}")
    if len(keys) < 2 or min(keys) < 1:
        ap.error("--scenarios: at least two positive seqlen_k values")
    builds, fa3 = load_backends(args)
    timed = clocked_timing(args)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    items = args.batch * args.heads * ((args.seqlen_q + 127) // 128)
    print(f"device {torch.cuda.get_device_name(0)} ({sms} SMs); batch {args.batch}, "
          f"heads {args.heads}, seqlen_q {args.seqlen_q}: {items} items of 128 rows; "
          f"{'causal' if args.causal else 'non-causal'} {args.dtype}; {args.pad_us:g} us pad, "
          f"{args.samples} samples each, interleaved; clock over a {args.probe_us:g} us "
          f"spin right after each call")
    for d in dims:
        per = {}  # backend -> [(seqlen_k, cycles per item)]
        print(f"\nhead_dim {d}")
        print(f"{'seqlen_k':>8s} {'backend':8s} {'ms':>9s} {'TFLOP/s':>8s} {'MHz':>6s} "
              f"{'cycles/item':>11s}")
        family = [{"name": f"hd{d}_k{sk}", "seqlen_k": sk,
                   "params": {"batch": args.batch, "seqlen_q": args.seqlen_q, "seqlen_k": sk,
                              "heads_q": args.heads, "heads_kv": args.heads, "head_dim": d,
                              "causal": int(args.causal), "dtype": args.dtype}}
                  for sk in keys]
        for s, fl, fns in each_scenario(args, builds, fa3, "fa3_s1", family):
            sk = s["seqlen_k"]
            for name, (ms, _, mhz) in timed(fns).items():
                cyc = ms * 1e-3 * mhz * 1e6 * sms / items
                per.setdefault(name, []).append((sk, cyc))
                tf = fl / (ms * 1e-3) / 1e12
                print(f"{sk:8d} {name:8s} {ms:9.4f} {tf:8.1f} {mhz:6.0f} {cyc:11.0f}",
                      flush=True)
        bound = 4 * 128 * 128 * d / DENSE_FLOPS_PER_SM_CYCLE
        if args.causal:
            bound /= 2  # about half of each row's keys, on average
        print(f"fit, head_dim {d}: cycles per item = fixed + per-128-keys x seqlen_k / 128 "
              f"(tensor-core bound per 128 keys: {bound:.0f})")
        print(f"{'backend':8s} {'fixed':>8s} {'per 128':>8s} {'/bound':>7s} {'max |resid|':>11s}")
        for name, pts in per.items():
            if len(pts) < 2:
                continue
            a, b = line([x for x, _ in pts], [y for _, y in pts])
            resid = max(abs(y - (a + b * x)) for x, y in pts)
            print(f"{name:8s} {a:8.0f} {b * 128:8.0f} {b * 128 / bound:7.3f} {resid:11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
