#!/usr/bin/env python3
"""Session 64: three backward calls per row under the diagnostic trace (s64_bwd_trace.patch, FLASHATTN_BWD_TRACE
set by the caller), rows in the order printed; the third call of each row is the one to read (bench/backward_trace.py).
"""
import importlib
import os

import torch

# The package to trace (the trace build's, installed beside the tree's as flashattn_trace).
_ops = importlib.import_module(os.environ.get("FLASHATTN_PACKAGE", "flashattn") + "._ops")

index = 0
for d in (128, 64):
    for s in (512, 2048):
        for causal in (False, True):
            b, h = max(1, 16384 // s), 2048 // d
            q, k, v, dout = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
            out, lse, rng = _ops.fwd(q, k, v, None, causal, -1, -1, 0.0, None, 0.0, None, False, 0)
            for _ in range(3):
                _ops.bwd(dout, q, k, v, out, lse, None, causal, -1, -1, 0.0, None, 0.0, rng, None, False)
                index += 1
            torch.cuda.synchronize()
            print(f"d{d} s{s} {'causal' if causal else 'full'}: trace {index - 1}", flush=True)
