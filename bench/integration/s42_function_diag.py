"""Session 42: where the host time of an eager flash_attn_func call that records a gradient goes (GPU).

Each case: the wall time of N back-to-back calls (then one synchronize) over N, best of 5, like
bench/python_overhead.py. The cases take the autograd.Function route apart: its machinery over a stub forward
(preallocated outputs), the implementation alone with grad mode on, and the full call.
"""

import json
import os
import sys

import torch

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
    fn = _ops._IMPLEMENTATIONS[_ops.fwd][0]
    args = (None, False, -1, -1, 0.0, None, 0.0, None, False)
    out, lse, rng = fn(q, k, v, *args)

    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, *rest):
            ctx.save_for_backward(q, k, v, out, lse, rng)
            ctx.mark_non_differentiable(lse)
            return torch.empty_like(out), lse, rng

        @staticmethod
        def backward(ctx, dout, dlse, drng):
            return (None,) * 12

    cases = {
        "no grad: flash_attn_func": (False, lambda: flashattn.flash_attn_func(q, k, v)),
        "grad mode, plain q: flash_attn_func (direct)": (True, lambda: flashattn.flash_attn_func(q, k, v)),
        "grad: flash_attn_func (Function)": (True, lambda: flashattn.flash_attn_func(qg, k, v)),
        "grad: implementation alone (no Function)": (True, lambda: fn(qg, k, v, *args)),
        "grad: Function over a stub forward": (True, lambda: Stub.apply(qg, k, v, *args)),
        "grad: _ops.call route decision": (True, lambda: _ops._route(_ops.fwd, (qg, k, v) + args)),
        "grad: torch.empty_like + mul (two tiny ops recording grad)": (True, lambda: (qg * 2).sum()),
        "no grad: torch.empty_like x2": (False, lambda: (torch.empty_like(q), torch.empty_like(q))),
    }
    for name, (grad, f) in cases.items():
        with torch.set_grad_enabled(grad):
            print(json.dumps({"case": name, "host_us_per_call": round(host_us(f, 2000), 1)}), flush=True)


if __name__ == "__main__":
    main()
