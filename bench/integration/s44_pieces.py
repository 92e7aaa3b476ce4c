"""Session 44: the pieces of an eager call that the tensor-object binding and its neighbours change (GPU host).

Both argument forms go into the same extension build (the tuple form from flashattn_base's describe(), the tensor
objects as flashattn passes them): select_kernel (parsing and the kernel choice, no launch) and run (the launch
too, its workspace through the callback), with prebuilt arguments; then workspace allocations and the no-dropout
rng state in their current and candidate forms. Each: host_us of bench/python_overhead.py (best of 5 rounds of N
back-to-back calls), three rounds, the rows of each round interleaved.
"""

import functools
import json
import os
import statistics
import sys

import torch

from flashattn import _C
from flashattn import _runtime as rt
import flashattn_base
from flashattn_base import _runtime as rt_base

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from python_overhead import host_us  # noqa: E402  (bench/)


def main():
    dt = torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device="cuda", dtype=dt)
    k = torch.randn(1, 64, 8, 128, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    out = torch.empty_like(q)
    lse = q.new_empty((1, 8, 1), dtype=torch.float32)
    dev = q.device
    options = {"softmax_scale": None, "causal": False, "window_left": -1, "window_right": -1, "softcap": 0.0,
               "alibi_slopes": None, "dropout_p": 0.0, "sink": None}
    tensors = {"q": q, "k": k, "v": v, "out": out, "lse": lse, **options}
    tuples = {name: rt_base.describe(t, name) for name, t in tensors.items() if isinstance(t, torch.Tensor)}
    tuples.update(options)
    stream = rt._current_stream(0)
    allocate = functools.partial(rt._aligned_workspace, device=dev)
    assert _C.select_kernel("forward", tensors, "auto") == _C.select_kernel("forward", tuples, "auto")
    nbytes = 4096
    pieces = {
        "describe() x5 (the tuple form)": lambda: [rt_base.describe(t, "x") for t in (q, k, v, out, lse)],
        "select_kernel, tuples": lambda: _C.select_kernel("forward", tuples, "auto"),
        "select_kernel, tensors": lambda: _C.select_kernel("forward", tensors, "auto"),
        "run forward, tuples": lambda: _C.run("forward", tuples, "auto", stream, allocate),
        "run forward, tensors": lambda: _C.run("forward", tensors, "auto", stream, allocate),
        "workspace: torch.empty(n + 256, uint8, device=)": lambda: rt._aligned_workspace(nbytes, dev),
        "workspace: q.new_empty(n + 256, dtype=uint8)": lambda: q.new_empty(nbytes + 256, dtype=torch.uint8),
        "rng: torch.zeros(2, int64)": lambda: torch.zeros(2, dtype=torch.int64),
        "rng: torch.empty(2, int64)": lambda: torch.empty(2, dtype=torch.int64),
        "lse: q.new_empty((b, h, s), float32)": lambda: q.new_empty((1, 8, 1), dtype=torch.float32),
        "out: torch.empty_like(q)": lambda: torch.empty_like(q, memory_format=torch.contiguous_format),
        "flash_attn_func, flashattn_base": lambda: flashattn_base.flash_attn_func(q, k, v),
        "flash_attn_func, flashattn": lambda: __import__("flashattn").flash_attn_func(q, k, v),
    }
    readings = {}
    for round_ in range(3):
        for name, fn in (pieces.items() if round_ % 2 == 0 else reversed(pieces.items())):
            us = host_us(fn, 2000)
            readings.setdefault(name, []).append(us)
            print(json.dumps({"round": round_, "piece": name, "host_us": round(us, 2)}), flush=True)
    for name in pieces:
        print(json.dumps({"piece": name, "median_us": round(statistics.median(readings[name]), 2)}), flush=True)


if __name__ == "__main__":
    with torch.no_grad():
        main()
