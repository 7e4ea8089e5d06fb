#!/usr/bin/env python3
"""The GPU's own ceilings, measured where the kernel is timed.

A dense bf16 matrix product (M = N = K = 8192, random normal data, as the
workplace's machine notes measure it) gives the matrix rate the attention
kernels are held against ("% of the measured bf16 peak"); a device-to-device
copy of 2 GiB gives the memory bandwidth (bytes read plus written) that
bounds the short, flushed rows (the grid's s512 move about 268 MB per call).
Each figure is the median and the best of --reps timed repetitions after
three untimed ones, by CUDA events around each. One line per figure, and
--json for scripts.

  python3 kernels/flash_attention_fwd/bench/ceilings.py [--label before] [--json]
"""

import argparse
import json
import statistics
import sys


def timed(torch, fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)  # seconds
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", default="", help="a word for the lines (e.g. before, after)")
    ap.add_argument("--reps", type=int, default=10, help="timed repetitions per figure (default 10)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("ceilings.py: PyTorch is not installed here")
    if not torch.cuda.is_available():
        sys.exit("ceilings.py: skipped: no CUDA device")
    if a.reps < 1:
        sys.exit("ceilings.py: --reps must be at least 1")
    dev = torch.cuda.get_device_name()
    n = 8192
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    z = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    mm = timed(torch, lambda: torch.matmul(x, y, out=z), a.reps)
    flops = 2.0 * n * n * n
    del x, y, z
    nbytes = 2 << 30
    src = torch.empty(nbytes, device="cuda", dtype=torch.uint8).random_(0, 255)
    dst = torch.empty_like(src)
    cp = timed(torch, lambda: dst.copy_(src), a.reps)
    res = {
        "device": dev,
        "label": a.label,
        "bf16_matmul_tflops": {"median": flops / statistics.median(mm) / 1e12,
                               "best": flops / min(mm) / 1e12},
        "copy_tbps": {"median": 2 * nbytes / statistics.median(cp) / 1e12,
                      "best": 2 * nbytes / min(cp) / 1e12},
        "reps": a.reps,
    }
    if a.json:
        print(json.dumps(res))
        return
    tag = f" ({a.label})" if a.label else ""
    print(f"ceilings{tag} on {dev}: bf16 matmul {n}^3 random "
          f"{res['bf16_matmul_tflops']['median']:.1f} TFLOP/s median, "
          f"{res['bf16_matmul_tflops']['best']:.1f} best; "
          f"device copy of {nbytes >> 30} GiB {res['copy_tbps']['median']:.2f} TB/s median "
          f"(read + written), {res['copy_tbps']['best']:.2f} best; {a.reps} reps each")


if __name__ == "__main__":
    main()
