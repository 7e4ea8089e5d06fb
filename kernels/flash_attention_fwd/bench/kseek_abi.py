"""Python side of the KernelSeek candidate ABI for flash_attention_fwd.

Mirrors harness/include/kernelseek/abi.h with ctypes (kseek_tensor,
kseek_param, kseek_launch_args), loads a kernel shared library and calls
kseek_launch on torch tensors, and holds what bench/anchor.py and
bench/measure_tolerance.py share: the scenario list, the FLOP count,
input creation, the harness's error measures and a timer.
"""

import ctypes
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
TASK_DIR = os.path.dirname(HERE)
sys.path.insert(0, TASK_DIR)
from gen_scenarios import flops  # noqa: E402  (one FLOP formula in Python)

KSEEK_ABI_VERSION = 1
KSEEK_MAX_DIMS = 8
# kseek_dtype values (part of the ABI).
KSEEK_DTYPE = {"f32": 0, "f16": 1, "bf16": 2, "f64": 3, "i32": 4, "i64": 5,
               "u8": 6}
TORCH_DTYPE = {"bf16": torch.bfloat16, "f16": torch.float16}
PARAM_ORDER = ("batch", "seqlen_q", "seqlen_k", "heads_q", "heads_kv",
               "head_dim", "causal", "dtype")


class KseekTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p),
                ("data", ctypes.c_void_p),
                ("dtype", ctypes.c_int32),
                ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * KSEEK_MAX_DIMS),
                ("strides", ctypes.c_int64 * KSEEK_MAX_DIMS)]


class KseekParam(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class KseekLaunchArgs(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32),
                ("num_params", ctypes.c_int32),
                ("params", ctypes.POINTER(KseekParam)),
                ("num_tensors", ctypes.c_int32),
                ("tensors", ctypes.POINTER(KseekTensor)),
                ("stream", ctypes.c_void_p)]


def load_scenarios(task_dir=TASK_DIR):
    with open(os.path.join(task_dir, "task.json")) as f:
        return json.load(f)["scenarios"]


def select(scenarios, names=None, grid_only=False):
    if names:
        wanted = names.split(",")
        by_name = {s["name"]: s for s in scenarios}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise SystemExit("unknown scenarios: " + ", ".join(missing))
        return [by_name[n] for n in wanted]
    if grid_only:
        return [s for s in scenarios if s["name"].startswith("grid_")]
    return list(scenarios)


def make_inputs(p, seed, device="cuda"):
    """q, k, v (BSHD, normal(0, 1)) and empty o, lse for scenario params p."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    dt = TORCH_DTYPE[p["dtype"]]
    b, sq, sk = p["batch"], p["seqlen_q"], p["seqlen_k"]
    hq, hkv, d = p["heads_q"], p["heads_kv"], p["head_dim"]
    q = torch.randn(b, sq, hq, d, generator=g, device=device).to(dt)
    k = torch.randn(b, sk, hkv, d, generator=g, device=device).to(dt)
    v = torch.randn(b, sk, hkv, d, generator=g, device=device).to(dt)
    o = torch.empty(b, sq, hq, d, device=device, dtype=dt)
    lse = torch.empty(b, hq, sq, device=device, dtype=torch.float32)
    return q, k, v, o, lse


class Kernel:
    """A kernel library implementing kseek_launch (see abi.h)."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(os.path.abspath(path))
        self.lib.kseek_launch.argtypes = [ctypes.POINTER(KseekLaunchArgs)]
        self.lib.kseek_launch.restype = ctypes.c_int
        self.error_message = getattr(self.lib, "kseek_error_message", None)
        if self.error_message is not None:
            self.error_message.restype = ctypes.c_char_p

    def bind(self, p, tensors, stream=None):
        """Returns a no-argument callable that launches on `tensors`
        (q, k, v, o, lse in task order) with scenario params p."""
        names = [b"q", b"k", b"v", b"o", b"lse"]
        ts = (KseekTensor * 5)()
        for i, (name, t) in enumerate(zip(names, tensors)):
            ts[i].name = name
            ts[i].data = t.data_ptr()
            ts[i].dtype = (KSEEK_DTYPE["f32"] if t.dtype == torch.float32
                           else KSEEK_DTYPE[p["dtype"]])
            ts[i].ndim = t.dim()
            for j in range(t.dim()):
                ts[i].shape[j] = t.shape[j]
                ts[i].strides[j] = t.stride(j)
        ps = (KseekParam * len(PARAM_ORDER))()
        for i, name in enumerate(PARAM_ORDER):
            ps[i].name = name.encode()
            value = p[name]
            ps[i].value = KSEEK_DTYPE[value] if name == "dtype" else value
        if stream is None:
            stream = torch.cuda.current_stream()
        args = KseekLaunchArgs(KSEEK_ABI_VERSION, len(PARAM_ORDER), ps, 5, ts,
                               ctypes.c_void_p(stream.cuda_stream))
        keep = (names, ts, ps, args, tensors)

        def launch():
            rc = self.lib.kseek_launch(ctypes.byref(keep[3]))
            if rc != 0:
                msg = (self.error_message().decode()
                       if self.error_message is not None else "")
                raise RuntimeError(f"kseek_launch returned {rc}: {msg}")

        return launch


def errors(out, ref):
    """The harness's measures: (rel_l2, max_abs) over elements where the
    reference is finite; an infinity must match exactly; NaN gives inf."""
    out = out.double()
    ref = ref.double()
    if torch.isnan(out).any():
        return float("inf"), float("inf")
    inf_ref = torch.isinf(ref)
    if not torch.equal(out[inf_ref], ref[inf_ref]) or \
            torch.isinf(out[~inf_ref]).any():
        return float("inf"), float("inf")
    diff = (out - ref)[~inf_ref]
    ref_f = ref[~inf_ref]
    norm = ref_f.norm().item()
    rel = diff.norm().item() / norm if norm > 0 else diff.norm().item()
    return rel, (diff.abs().max().item() if diff.numel() else 0.0)


class Timer:
    """The same method for every kernel: warm-up, then per sample an L2
    flush (writing twice the L2 size), a GPU spin of pad_us microseconds,
    and CUDA events around one call; the median of the samples, in
    milliseconds.

    The spin hides the host's work to launch the call (Python dispatch,
    plan look-ups, argument packing, 20-100 us for SDPA and FA3): it
    happens while the GPU is still busy, and the events time the GPU's
    execution alone. Without it (pad_us 0), a call whose host work
    outlasts the flush has the GPU's idle wait for its launch counted in
    its time, and a kernel launched through ctypes (little host work)
    looks faster than a Python library's. host_us() measures a call's host
    work, so a script can check that the pad covers it.

    The flush writes (flush "write", the default): L2 is then full of dirty
    lines, and a call's misses write them back to DRAM while it runs, as
    after a kernel that wrote its output. With flush "read" it reads the
    buffer instead, so L2 holds clean lines and a call's misses cost only
    its own reads (for comparing how much of a memory-bound call's time
    and spread the write-backs make)."""

    DEFAULT_PAD_US = 300.0

    @staticmethod
    def add_arguments(ap, samples, budget_s):
        """The timing options of a script (the defaults its own)."""
        ap.add_argument("--samples", type=int, default=samples)
        ap.add_argument("--warmup", type=int, default=3)
        ap.add_argument("--budget-s", type=float, default=budget_s,
                        help="timed seconds per kernel and scenario (caps "
                        "samples; never fewer than 5)")
        ap.add_argument("--pad-us", type=float, default=Timer.DEFAULT_PAD_US,
                        help="GPU spin after each L2 flush so that the "
                        "events time execution, not the host's launch work "
                        "(default %(default)g; 0 counts the host's work)")
        ap.add_argument("--flush", choices=Timer.FLUSH_MODES, default="write",
                        help="the L2 flush writes twice the L2 size (write, "
                        "default: L2 left dirty) or reads it (read: L2 left "
                        "clean)")

    FLUSH_MODES = ("write", "read")

    @classmethod
    def from_args(cls, args):
        return cls(args.samples, args.warmup, args.budget_s, args.pad_us,
                   getattr(args, "flush", "write"))

    def __init__(self, samples=30, warmup=3, budget_s=2.0,
                 pad_us=DEFAULT_PAD_US, flush="write"):
        if flush not in self.FLUSH_MODES:
            raise ValueError(f"flush must be one of {self.FLUSH_MODES}, "
                             f"got {flush!r}")
        self.flush = flush
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        self.flush_buf = torch.zeros(2 * l2, dtype=torch.uint8, device="cuda")
        self.flush_words = self.flush_buf.view(torch.int32)
        self.samples, self.warmup, self.budget_s = samples, warmup, budget_s
        # Spin cycles per microsecond, measured.
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()
        self.cycles_per_us = 10_000_000 / (start.elapsed_time(end) * 1e3)
        self.set_pad_us(pad_us)

    def set_pad_us(self, pad_us):
        self.pad_us = pad_us
        self.pad_cycles = int(pad_us * self.cycles_per_us) if pad_us > 0 else 0

    def host_us(self, fn, calls=5):
        """The host's time to launch one call of fn (median of `calls`),
        measured while the GPU is busy so that no call waits for it."""
        torch.cuda.synchronize()
        torch.cuda._sleep(int(5_000 * self.cycles_per_us))  # 5 ms busy
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        return statistics.median(times)

    def _flush(self):
        if self.flush == "read":
            self.flush_words.max()  # every word read; a scalar written
        else:
            self.flush_buf.zero_()
        if self.pad_cycles:
            torch.cuda._sleep(self.pad_cycles)

    def median_ms(self, fn):
        """One kernel: the median in milliseconds and the sample count."""
        medians, n = self.medians_ms([fn])
        return medians[0], n

    def medians_ms(self, fns):
        """Several kernels timed in turn: one sample of each per round, the
        order rotating every round, so that a drift of the clocks during the
        measurement (power, heat) weighs on all of them alike. Returns the
        median in milliseconds per kernel and the number of rounds."""
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        slowest = 1e-3
        for fn in fns:
            fn()  # first call: also the cost estimate
            start.record()
            fn()
            end.record()
            end.synchronize()
            slowest = max(slowest, start.elapsed_time(end))
            for _ in range(max(0, self.warmup - 2)):
                fn()
        # Fewer samples for slow kernels, never fewer than 5.
        n = max(5, min(self.samples,
                       int(self.budget_s * 1e3 / slowest)))
        times = [[] for _ in fns]
        for r in range(n):
            for j in range(len(fns)):
                i = (r + j) % len(fns)
                self._flush()
                start.record()
                fns[i]()
                end.record()
                end.synchronize()
                times[i].append(start.elapsed_time(end))
        return [statistics.median(t) for t in times], n
