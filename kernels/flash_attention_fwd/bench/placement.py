#!/usr/bin/env python3
"""Builds and cuDNN on the same inputs placed at different device addresses.

For shapes whose times move between processes (NOTES.md v3i, "Next" item
4): per scenario the inputs are made once, then copied into fresh buffers
at each placement and timed there (the builds and cuDNN interleaved, as
variants.py times). A placement is [WHAT:]WHERE. WHERE is OFFSET (bytes
past a 2 MiB boundary of a buffer of its own; 0 is a fresh 2 MiB-aligned
buffer) or gapN (a dummy allocation of N MiB made first, which moves the
tensors to other pages). WHAT says which tensors move: all (default: q, k,
v and o), o (o alone; q, k and v stay where they were made) or qkv (q, k
and v; o stays). cuDNN writes its own output, so only our o's placement
is ours alone. If a build's time moves with the placement while cuDNN's
does not, the addresses are the cause.

  python3 placement.py --lib a=/tmp/a.so [--lib b=/tmp/b.so ...] \\
      --scenarios gqa4_hd160_full_s2048_bf16 \\
      --placements 0,1048576,gap37,o:gap37,qkv:gap37 [--repeats 2]
"""

import argparse
import json
import sys

import torch

from anchor import BACKENDS, first_line, geomean, sdpa_callable
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


def place(base, spec, keep):
    """q, k, v, o for placement spec [WHAT:]WHERE (see the docstring)."""
    what, _, where = spec.rpartition(":")
    what = what or "all"
    if what not in ("all", "o", "qkv"):
        raise SystemExit(f"placement {spec!r}: WHAT must be all, o or qkv")
    moved = {"all": (0, 1, 2, 3), "o": (3,), "qkv": (0, 1, 2)}[what]
    if where.startswith("gap"):
        keep.append(torch.empty(int(where[3:]) << 20, dtype=torch.uint8,
                                device="cuda"))
        move = lambda t: t.clone()
    else:
        move = lambda t: placed(t, int(where), keep)
    return [move(t) if i in moved else t for i, t in enumerate(base[:4])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", action="append", required=True,
                    help="NAME=PATH of one build (repeat; a bare PATH is "
                    "named after its position)")
    ap.add_argument("--scenarios", required=True,
                    help="comma-separated scenario names")
    ap.add_argument("--placements", default="0,128,512,4096,1048576,gap37,gap300")
    ap.add_argument("--repeats", type=int, default=1,
                    help="times through the placement list per scenario")
    Timer.add_arguments(ap, samples=12, budget_s=0.15)
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--out", help="JSON output")
    args = ap.parse_args()

    builds = []
    for i, spec in enumerate(args.lib):
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = "abcdefgh"[i % 8] if i < 8 else f"b{i}", spec
        builds.append((name, Kernel(path)))
    scenarios = select(load_scenarios(), args.scenarios, False)
    timer = Timer.from_args(args)
    cudnn = dict(BACKENDS)["cudnn"]
    placements = [x.strip() for x in args.placements.split(",") if x.strip()]
    print(f"device {torch.cuda.get_device_name(0)}; cuDNN "
          f"{torch.backends.cudnn.version()}; GPU spin {args.pad_us:g} us")
    print(f"{'scenario':40s} {'placement':>12s} {'q mod 2M':>9s} "
          f"{'o mod 2M':>9s} {'cuDNN':>7s}"
          + "".join(f" {n[:8]:>8s}" for n, _ in builds) + "  (TFLOP/s)")
    rows = []
    for s in scenarios:
        p = s["params"]
        fl = flops(p)
        base = make_inputs(p, args.seed)
        for rep in range(args.repeats):
            for pl in placements:
                keep = []
                q, k, v, o = place(base, pl, keep)
                lse = base[4]
                row = {"name": s["name"], "placement": pl, "repeat": rep,
                       "addresses": {n: t.data_ptr() for n, t in
                                     zip("qkvo", (q, k, v, o))},
                       "builds": {}}
                ref_fn = sdpa_callable(cudnn, p, q, k, v)
                try:
                    ref = ref_fn().transpose(1, 2).float().nan_to_num(0.0)
                    timed = [("cudnn", ref_fn)]
                except Exception:  # cuDNN refuses the shape
                    ref, timed = None, []
                notes = []
                for name, kern in builds:
                    try:
                        launch = kern.bind(p, (q, k, v, o, lse))
                        o.fill_(float("nan"))
                        launch()
                        torch.cuda.synchronize()
                        if ref is not None and not (
                                p["causal"] and p["seqlen_q"] > p["seqlen_k"]):
                            rel, _ = errors(o.float(), ref)
                            row["builds"][name] = {"rel_l2_vs_cudnn": rel}
                            if not rel <= 2e-2:
                                notes.append(f"{name} WRONG")
                        timed.append((name, launch))
                    except Exception as e:
                        notes.append(f"{name}: {first_line(e)}")
                medians, _ = timer.medians_ms([f for _, f in timed])
                line = (f"{s['name']:40s} {pl:>12s} {q.data_ptr() % ALIGN:9d} "
                        f"{o.data_ptr() % ALIGN:9d}")
                got = {n: fl / ms / 1e9 for (n, _), ms in zip(timed, medians)}
                row["tflops"] = got
                line += (f" {got['cudnn']:7.1f}" if "cudnn" in got
                         else f" {'n/a':>7s}")
                for name, _ in builds:
                    line += (f" {got[name]:8.1f}" if name in got
                             else f" {'err':>8s}")
                print(line + ("  " + "; ".join(notes) if notes else ""),
                      flush=True)
                rows.append(row)
                del q, k, v, o, keep
                torch.cuda.empty_cache()
        del base
        torch.cuda.empty_cache()
    # Per build and scenario: the spread over the placements.
    print()
    print(f"{'scenario':40s} {'backend':>8s} {'min':>7s} {'max':>7s} "
          f"{'max/min':>7s} {'geomean':>8s}")
    for s in scenarios:
        for name in ["cudnn"] + [n for n, _ in builds]:
            xs = [r["tflops"][name] for r in rows
                  if r["name"] == s["name"] and name in r["tflops"]]
            if xs:
                print(f"{s['name']:40s} {name[:8]:>8s} {min(xs):7.1f} "
                      f"{max(xs):7.1f} {max(xs) / min(xs):7.3f} "
                      f"{geomean(xs):8.1f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
