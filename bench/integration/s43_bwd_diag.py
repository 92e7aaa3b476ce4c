"""Session 43: where the host time of an eager forward + backward step goes (GPU).

Session 42 read a flash_attn_func step (forward, then backward through the autograd.Function) at 302-759 us of
host time against SDPA's 197-338, while the forward alone took 52-103 and the C++ backward 15-18: some 200-600
us sit in the backward's path. CUDA backward nodes run on the autograd engine's device thread, so a Python
backward means the calling thread hands the GIL to that thread and back. This takes the step apart:

- steps: ours, SDPA, a stub Function (preallocated outputs and gradients: the engine and one Python backward),
  the stub with our bwd implementation as its backward, a C++-only graph of two tiny ops;
- each of them again with the engine's device threads off (torch.autograd.set_multithreading_enabled(False)),
  which runs every node on the calling thread;
- a timeline of our step: perf_counter on the calling thread before forward, before .backward() and after it,
  and inside the backward (entry, before the bwd call, after it), with the backward's thread.

Each case is host_us of bench/python_overhead.py (best of 5 rounds of N back-to-back steps).
"""

import json
import os
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

import flashattn
from flashattn import _ops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from python_overhead import host_us  # noqa: E402  (bench/)


def main():
    dt = torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device="cuda", dtype=dt)
    k = torch.randn(1, 64, 8, 128, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    qg = q.clone().requires_grad_()
    qgt = qg.detach().transpose(1, 2).requires_grad_()
    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
    dout = torch.randn_like(q)
    fwd_impl = _ops._IMPLEMENTATIONS[_ops.fwd][0]
    bwd_impl = _ops._IMPLEMENTATIONS[_ops.bwd][0]
    opts = (None, False, -1, -1, 0.0, None, 0.0, None, False)
    out, lse, rng = fwd_impl(q, k, v, *opts)
    dq_pre = torch.empty_like(q)

    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q_, k_, v_):
            ctx.save_for_backward(q_, k_, v_, out, lse)
            return out.clone()

        @staticmethod
        def backward(ctx, d):
            ctx.saved_tensors
            return dq_pre, None, None

    class StubBwd(Stub):
        """Stub's forward; our bwd implementation as the backward."""

        @staticmethod
        def backward(ctx, d):
            q_, k_, v_, o_, l_ = ctx.saved_tensors
            dq, _, _, _ = bwd_impl(d.contiguous(), q_, k_, v_, o_, l_, None, False, -1, -1, 0.0, None, 0.0,
                                   rng, None, False)
            return dq, None, None

    steps = {
        "ours .sum().backward()": lambda: flashattn.flash_attn_func(qg, k, v).sum().backward(),
        "ours .backward(dout)": lambda: flashattn.flash_attn_func(qg, k, v).backward(dout),
        "sdpa .sum().backward()": lambda: F.scaled_dot_product_attention(qgt, kt, vt).sum().backward(),
        "stub Function (no work)": lambda: Stub.apply(qg, k, v).sum().backward(),
        "stub Function, our bwd implementation as backward": lambda: StubBwd.apply(qg, k, v).sum().backward(),
        "C++ ops only ((q*2).sum())": lambda: (qg * 2).sum().backward(),
    }
    for threads in (True, False):
        with torch.autograd.set_multithreading_enabled(threads):
            for name, fn in steps.items():
                row = {"case": name, "engine_threads": threads, "host_us_per_step": round(host_us(fn, 500), 1)}
                print(json.dumps(row), flush=True)

    # The timeline of our step.
    function = _ops._AUTOGRAD_FUNCTIONS[_ops.fwd]
    original_backward = function.backward
    marks = {}

    def traced_backward(ctx, *grads):
        marks["entry"] = time.perf_counter()
        marks["thread"] = threading.get_ident()
        result = original_backward(ctx, *grads)
        marks["exit"] = time.perf_counter()
        return result

    original_bwd_impl = _ops._IMPLEMENTATIONS[_ops.bwd]

    def traced_bwd(*args):
        marks["bwd_in"] = time.perf_counter()
        result = original_bwd_impl[0](*args)
        marks["bwd_out"] = time.perf_counter()
        return result

    function.backward = staticmethod(traced_backward)
    _ops._IMPLEMENTATIONS[_ops.bwd] = (traced_bwd, original_bwd_impl[1])
    for threads in (True, False):
        gaps = {key: [] for key in ("forward", "call_to_entry", "entry_to_bwd", "bwd", "bwd_to_exit",
                                    "exit_to_return", "step")}
        with torch.autograd.set_multithreading_enabled(threads):
            for i in range(600):
                t0 = time.perf_counter()
                o = flashattn.flash_attn_func(qg, k, v).sum()
                t1 = time.perf_counter()
                o.backward()
                t2 = time.perf_counter()
                if i < 100:
                    continue
                gaps["forward"].append(t1 - t0)
                gaps["call_to_entry"].append(marks["entry"] - t1)
                gaps["entry_to_bwd"].append(marks["bwd_in"] - marks["entry"])
                gaps["bwd"].append(marks["bwd_out"] - marks["bwd_in"])
                gaps["bwd_to_exit"].append(marks["exit"] - marks["bwd_out"])
                gaps["exit_to_return"].append(t2 - marks["exit"])
                gaps["step"].append(t2 - t0)
        torch.cuda.synchronize()
        row = {"case": "timeline of ours .sum().backward() (medians, us)", "engine_threads": threads,
               "backward_on_calling_thread": marks["thread"] == threading.get_ident()}
        row.update({key: round(statistics.median(values) * 1e6, 1) for key, values in gaps.items()})
        print(json.dumps(row), flush=True)
    function.backward = original_backward
    _ops._IMPLEMENTATIONS[_ops.bwd] = original_bwd_impl


if __name__ == "__main__":
    main()
