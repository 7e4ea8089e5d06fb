#!/usr/bin/env python3
"""One build and cuDNN on the same inputs placed at different device addresses.

For shapes whose times move between processes (NOTES.md v3i, "Next" item
4): per scenario the inputs are made once, then copied into fresh buffers
at each placement and timed there (the build and cuDNN interleaved, as
variants.py times). A placement is "OFFSET" (bytes added to each of q, k,
v and o inside a buffer of their own; 0 is a fresh 2 MiB-aligned
buffer), or "gapN" (a dummy allocation of N MiB made before the inputs,
which moves them to other pages). If the build's time moves with the
placement while cuDNN's does not, the addresses are the cause.

  python3 placement.py --lib /tmp/a.so --scenarios gqa4_hd160_full_s2048_bf16 \\
      --placements 0,128,512,4096,1048576,gap37,gap300 [--repeats 2]
"""

import argparse
import json
import sys

import torch

from anchor import BACKENDS, first_line, sdpa_callable
from kseek_abi import Kernel, Timer, errors, flops, load_scenarios, \
    make_inputs, select

ALIGN = 2 << 20


def placed(t, offset, keep):
    """A copy of t starting `offset` bytes past a 2 MiB boundary of a new
    buffer (kept alive in `keep`)."""
    n = t.numel() * t.element_size()
    buf = torch.empty(n + offset + 2 * ALIGN, dtype=torch.uint8, device="cuda")
    keep.append(buf)
    start = (-buf.data_ptr()) % ALIGN + offset
    view = buf[start:start + n].view(t.dtype).view(t.shape)
    view.copy_(t)
    return view


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="path of the build")
    ap.add_argument("--scenarios", required=True,
                    help="comma-separated scenario names")
    ap.add_argument("--placements", default="0,128,512,4096,1048576,gap37,gap300")
    ap.add_argument("--repeats", type=int, default=1,
                    help="times through the placement list per scenario")
    Timer.add_arguments(ap, samples=12, budget_s=0.15)
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--out", help="JSON output")
    args = ap.parse_args()

    kern = Kernel(args.lib)
    scenarios = select(load_scenarios(), args.scenarios, False)
    timer = Timer.from_args(args)
    cudnn = dict(BACKENDS)["cudnn"]
    placements = [x.strip() for x in args.placements.split(",") if x.strip()]
    print(f"device {torch.cuda.get_device_name(0)}; cuDNN "
          f"{torch.backends.cudnn.version()}; GPU spin {args.pad_us:g} us")
    print(f"{'scenario':40s} {'placement':>10s} {'q mod 2M':>9s} "
          f"{'k mod 2M':>9s} {'cuDNN':>7s} {'ours':>7s} {'/cuDNN':>6s}"
          "  (TFLOP/s)")
    rows = []
    for s in scenarios:
        p = s["params"]
        fl = flops(p)
        base = make_inputs(p, args.seed)
        for rep in range(args.repeats):
            for pl in placements:
                keep = []
                if pl.startswith("gap"):
                    keep.append(torch.empty(int(pl[3:]) << 20, dtype=torch.uint8,
                                            device="cuda"))
                    q, k, v, o = (t.clone() for t in base[:4])
                else:
                    q, k, v, o = (placed(t, int(pl), keep) for t in base[:4])
                lse = base[4]
                try:
                    launch = kern.bind(p, (q, k, v, o, lse))
                    o.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                except Exception as e:
                    print(f"{s['name']:40s} {pl:>10s} build: {first_line(e)}",
                          flush=True)
                    continue
                ref_fn = sdpa_callable(cudnn, p, q, k, v)
                row = {"name": s["name"], "placement": pl, "repeat": rep,
                       "addresses": {n: t.data_ptr() for n, t in
                                     zip("qkvo", (q, k, v, o))}}
                try:
                    ref = ref_fn().transpose(1, 2).float().nan_to_num(0.0)
                    if not (p["causal"] and p["seqlen_q"] > p["seqlen_k"]):
                        row["rel_l2_vs_cudnn"], _ = errors(o.float(), ref)
                    (c_ms, ms), _ = timer.medians_ms([ref_fn, launch])
                    row["cudnn_tflops"] = fl / c_ms / 1e9
                except Exception:  # cuDNN refuses the shape
                    (ms,), _ = timer.medians_ms([launch])
                    c_ms = None
                row["tflops"] = fl / ms / 1e9
                wrong = row.get("rel_l2_vs_cudnn", 0) > 2e-2
                print(f"{s['name']:40s} {pl:>10s} "
                      f"{q.data_ptr() % ALIGN:9d} {k.data_ptr() % ALIGN:9d} "
                      + (f"{row['cudnn_tflops']:7.1f}" if c_ms else f"{'n/a':>7s}")
                      + f" {row['tflops']:7.1f} "
                      + (f"{c_ms / ms:6.3f}" if c_ms else "")
                      + ("  WRONG" if wrong else ""), flush=True)
                rows.append(row)
                del q, k, v, o, keep
                torch.cuda.empty_cache()
        del base
        torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
