"""Host time per eager call of the PyTorch interface, beside SDPA (GPU).

Tiny problems, so every call is bound by its host work: the wall time of N back-to-back calls
until the last returns, over N, with the GPU's backlog after them (per call) beside it: near 0 when
the host is the bound. (Before session 42's last runs the wall time included the final synchronize.)
Prints one JSON row per case; --profile adds, per flashattn case, the share of the extension call
(_C.run: validation, kernel choice, launches) under cProfile.
Run: python3 bench/python_overhead.py [--calls 2000] [--profile]
"""

import argparse
import contextlib
import cProfile
import json
import pstats
import time

import torch
import torch.nn.functional as F

import flashattn
from flashattn import _ops


def host_us(fn, calls, drain=None):
    """Best of 5 rounds: the wall time of `calls` back-to-back calls until the last returns, over `calls`.

    drain (a list): gets the round's wait for the GPU after the loop, per call; near 0 when the calls are
    bound by the host (the GPU keeps up), else the GPU's backlog (then the loop time is not host time).
    """
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best, best_drain = float("inf"), 0.0
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        queued = time.perf_counter()
        torch.cuda.synchronize()
        done = time.perf_counter()
        if queued - start < best * calls / 1e6:
            best, best_drain = (queued - start) / calls * 1e6, (done - queued) / calls * 1e6
    if drain is not None:
        drain.append(best_drain)
    return best


@contextlib.contextmanager
def through_the_op():
    """Eager calls that need a gradient as before session 42: through the torch.library op's own autograd
    wrapper instead of the autograd.Function over the same formula."""
    saved = dict(_ops._AUTOGRAD_FUNCTIONS)
    _ops._AUTOGRAD_FUNCTIONS.clear()
    try:
        yield
    finally:
        _ops._AUTOGRAD_FUNCTIONS.update(saved)


def extension_share(fn, calls):
    """Microseconds per call in _runtime.run's own time and in total, under cProfile (both inflated by the
    profiler). _C.run (a nanobind function: validation, kernel choice, launches) is no builtin that cProfile
    sees, so its time is run's own (the workspace callback, Python, is counted apart)."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fn()
    profile.disable()
    torch.cuda.synchronize()
    stats = pstats.Stats(profile).stats
    total = sum(tt for (_, _, tt, _, _) in stats.values())
    inside = sum(tt for (file, _, name), (_, _, tt, _, _) in stats.items()
                 if file.endswith("_runtime.py") and name == "run")
    return round(inside / calls * 1e6, 1), round(total / calls * 1e6, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device=dev, dtype=dt)
    k = torch.randn(1, 64, 8, 128, device=dev, dtype=dt)
    v = torch.randn_like(k)
    k_cache = torch.randn(1, 256, 8, 128, device=dev, dtype=dt)
    v_cache = torch.randn_like(k_cache)
    seqlens = torch.tensor([100], device=dev, dtype=torch.int32)
    k_new, v_new = k[:, :1].contiguous(), v[:, :1].contiguous()
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    qg = q.clone().requires_grad_()
    qgt = qg.detach().transpose(1, 2).requires_grad_()

    def ours_grad():
        return flashattn.flash_attn_func(qg, k, v)

    def ours_step():
        flashattn.flash_attn_func(qg, k, v).sum().backward()

    def sdpa_step():
        F.scaled_dot_product_attention(qgt, kt, vt).sum().backward()

    # (name, call, needs grad mode, through the op)
    cases = [
        ("flash_attn_func", lambda: flashattn.flash_attn_func(q, k, v), False, False),
        ("flash_attn_func (requires_grad: autograd.Function)", ours_grad, True, False),
        ("flash_attn_func (requires_grad: through the op)", ours_grad, True, True),
        ("sdpa (requires_grad)", lambda: F.scaled_dot_product_attention(qgt, kt, vt), True, False),
        ("flash_attn_func forward + backward (autograd.Function)", ours_step, True, False),
        ("flash_attn_func forward + backward (through the op)", ours_step, True, True),
        ("sdpa forward + backward", sdpa_step, True, False),
        ("flash_attn_with_kvcache (append)",
         lambda: flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens),
         False, False),
        ("sdpa (default backend choice)", lambda: F.scaled_dot_product_attention(qt, kt, vt), False, False),
    ]
    for name, fn, grad, op in cases:
        calls = args.calls // 4 if "backward" in name else args.calls
        with torch.set_grad_enabled(grad), (through_the_op() if op else contextlib.nullcontext()):
            drain = []
            row = {"case": name, "host_us_per_call": round(host_us(fn, calls, drain), 1),
                   "gpu_backlog_us_per_call": round(drain[0], 2)}
            if args.profile and "sdpa" not in name:
                row["profiled_us_in_extension"], row["profiled_us_total"] = extension_share(fn, calls // 4)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
