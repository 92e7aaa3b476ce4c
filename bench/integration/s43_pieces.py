"""Session 43: the host time of each piece of an eager forward + backward step, on the GPU's host.

s43_bwd_diag.py put our step at 638 us against SDPA's 246 and a stub autograd.Function's 165, while the
Python of the same step on a CPU-only machine (extension call mocked out) costs ~60 us over the stub. This
times each piece alone with CUDA tensors: the allocations the wrappers make, the descriptors, the device and
stream queries, the extension call with prebuilt arguments, the implementations, the gradient copy.
Each: best of 5 rounds of N back-to-back calls, wall time over N (then one synchronize).
"""

import functools
import json
import time

import torch
import torch.nn.functional as F

from flashattn import _ops
from flashattn import _runtime as rt


def host_us(fn, calls=2000):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - start)
        torch.cuda.synchronize()
    return round(best / calls * 1e6, 2)


def main():
    dt = torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device="cuda", dtype=dt)
    k = torch.randn(1, 64, 8, 128, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    dout = torch.randn_like(q)
    expanded = torch.ones((), device="cuda", dtype=dt).expand(q.shape)
    dev = q.device
    fwd_impl = _ops._IMPLEMENTATIONS[_ops.fwd][0]
    bwd_impl = _ops._IMPLEMENTATIONS[_ops.bwd][0]
    opts = (None, False, -1, -1, 0.0, None, 0.0, None, False)
    out, lse, rng = fwd_impl(q, k, v, *opts)
    bwd_args = (dout, q, k, v, out, lse, None, False, -1, -1, 0.0, None, 0.0, rng, None, False)
    dq, dk, dv, dsink = bwd_impl(*bwd_args)
    options = _ops._options(None, False, -1, -1, 0.0, None, 0.0, rng, None)
    fwd_desc = {"q": rt.describe(q, "q"), "k": rt.describe(k, "k"), "v": rt.describe(v, "v"),
                "out": rt.describe(out, "out"), "lse": rt.describe(lse, "lse"), **options}
    bwd_desc = {"dout": rt.describe(dout, "dout"), "q": rt.describe(q, "q"), "k": rt.describe(k, "k"),
                "v": rt.describe(v, "v"), "out": rt.describe(out, "out"), "lse": rt.describe(lse, "lse"),
                "dq": rt.describe(dq, "dq"), "dk": rt.describe(dk, "dk"), "dv": rt.describe(dv, "dv"),
                "dsink": None, "deterministic": False, **options}
    stream = rt._current_stream(0)
    allocate = functools.partial(rt._aligned_workspace, device=dev)
    workspace = []

    def keep(nbytes):
        buffer, address = allocate(nbytes)
        workspace.append(buffer)
        return buffer, address

    cases = {
        "torch.empty(q.shape, dtype, device)": lambda: torch.empty(q.shape, dtype=q.dtype, device=dev),
        "torch.empty_like(q)": lambda: torch.empty_like(q),
        "q.new_empty(shape)": lambda: q.new_empty((1, 1, 8, 128)),
        "torch.empty((b, h, s), float32, device)": lambda: torch.empty((1, 8, 1), dtype=torch.float32, device=dev),
        "q.new_empty((b, h, s), dtype=float32)": lambda: q.new_empty((1, 8, 1), dtype=torch.float32),
        "torch.empty_like(q, contiguous_format)": lambda: torch.empty_like(q, memory_format=torch.contiguous_format),
        "torch.empty((0,), float32, device)": lambda: torch.empty((0,), dtype=torch.float32, device=dev),
        "torch.zeros(2, int64) (CPU)": lambda: torch.zeros(2, dtype=torch.int64),
        "workspace callback (4 KiB)": lambda: allocate(4096),
        "describe(q)": lambda: rt.describe(q, "q"),
        "q.device": lambda: q.device,
        "torch.cuda.current_device()": torch.cuda.current_device,
        "torch._C._cuda_getDevice()": torch._C._cuda_getDevice,
        "current raw stream": lambda: rt._current_stream(0),
        "current_backend()": rt.current_backend,
        "expanded dout .contiguous()": lambda: expanded.contiguous(),
        "_ops._route(bwd)": lambda: _ops._route(_ops.bwd, bwd_args),
        "_C.run forward (prebuilt arguments)": lambda: rt._C.run("forward", fwd_desc, "auto", stream, allocate),
        "_C.run backward (prebuilt arguments)": lambda: rt._C.run("backward", bwd_desc, "auto", stream, allocate),
        "_C.run backward, workspace kept until the round ends": lambda: rt._C.run("backward", bwd_desc, "auto",
                                                                                  stream, keep),
        "rt.run backward (prebuilt arguments)": lambda: rt.run("backward", bwd_desc, dev),
        "fwd implementation": lambda: fwd_impl(q, k, v, *opts),
        "bwd implementation": lambda: bwd_impl(*bwd_args),
        "sdpa forward (no grad)": lambda: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                                                         v.transpose(1, 2)),
    }
    for name, fn in cases.items():
        workspace.clear()
        print(json.dumps({"piece": name, "host_us": host_us(fn)}), flush=True)
        workspace.clear()


if __name__ == "__main__":
    main()
