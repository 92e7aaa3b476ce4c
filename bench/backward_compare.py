#!/usr/bin/env python3
"""The backward kernels beside each other and beside SDPA's, on one GPU, in one process.

Times the backward call alone (the forward's out and LSE computed once beforehand) of flashattn on each
named backend (`flashattn.use_backend`; the op runs in this thread), and SDPA's FLASH_ATTENTION and
CUDNN_ATTENTION backward through torch.autograd.grad on a graph kept alive (retain_graph) -- which
includes SDPA's own preprocess, as ours includes our preprocess and postprocess. Grid: the standard one
(16k tokens per batch, hidden 2048), bf16; FLOPs 2.5 x the forward's 4 b s^2 h d (halved when causal).
Each row is timed in --rounds rounds with the order of the implementations reversing each round; each
timing is the median of triton.testing.do_bench after --settle-ms of that implementation's own calls.
Before timing, every implementation's gradients (SDPA's too) are compared with SDPA's math backend's in fp32 on
the same inputs and the largest relative difference is printed: a sanity check, not the tests' rule.
A backend named NAME:det runs in deterministic mode (e.g. --backends cuda_sm90,cuda_sm90:det,cuda_sm80:det).
--softcap C and --alibi (slopes 2^(-8 (i + 1) / h) per head) time flashattn's backends with those options; SDPA
has neither, so its rows stay plain attention's (a yardstick of the options' cost; the row says sdpa_plain),
and the sanity check's reference is then an fp32 softmax written out here.
--dropout P times every implementation with dropout (SDPA's too, where its backend takes it; a backend that
refuses is named under sdpa_refused); the gradients' sanity check is then left out (each implementation drops
its own elements: flashattn's are checked against references with its Philox mask by the test suites).
--hdims takes D or DxDV (e.g. 192x128: dv = 128, MLA's shape); an SDPA backend that refuses a shape (its FA2
has no dv != d) is left out of that row, which names it under sdpa_refused. FLOPs with dv != d: 2.5 x the
forward's 2 b s^2 h (d + dv).

    python bench/backward_compare.py --hdims 128 --seqlens 512,1024,2048,4096,8192,16384 --out results.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashattn
from flashattn import _ops


def settle(fn, ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()


def bench_ms(fn, settle_ms):
    import triton.testing
    settle(fn, settle_ms)
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def flashattn_backward(backend, q, k, v, dout, causal, package=flashattn, deterministic=False, softcap=0.0,
                       alibi=None, dropout=0.0):
    ops = package._ops
    with torch.no_grad():
        out, lse, rng = ops.fwd(q, k, v, None, causal, -1, -1, softcap, alibi, dropout, None, False, 0)

    def run():
        with package.use_backend(backend):
            return ops.bwd(dout, q, k, v, out, lse, None, causal, -1, -1, softcap, alibi, dropout, rng, None,
                           deterministic)
    return run


def sdpa_backward(backend, q, k, v, dout, causal, dropout=0.0):
    qt, kt, vt = (t.detach().transpose(1, 2).requires_grad_() for t in (q, k, v))
    with sdpa_kernel([backend]):
        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, dropout_p=dropout)
    dt = dout.transpose(1, 2)

    def run():
        return torch.autograd.grad(out, (qt, kt, vt), dt, retain_graph=True)
    return run


def reference_grads(q, k, v, dout, causal, softcap=0.0, alibi=None):
    qt, kt, vt = (t.detach().float().transpose(1, 2).requires_grad_() for t in (q, k, v))
    if softcap == 0.0 and alibi is None:
        with sdpa_kernel([SDPBackend.MATH]):
            out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    else:  # bottom-right aligned as flashattn's (sq == sk here)
        s = qt @ kt.transpose(-1, -2) * qt.shape[-1] ** -0.5
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        i = torch.arange(s.shape[-2], device=s.device)[:, None]
        j = torch.arange(s.shape[-1], device=s.device)[None, :]
        if alibi is not None:
            s = s - alibi.view(1, -1, 1, 1) * (i - j).abs()
        if causal:
            s = s.masked_fill(j > i, float("-inf"))
        out = torch.softmax(s, dim=-1) @ vt
    grads = torch.autograd.grad(out, (qt, kt, vt), dout.float().transpose(1, 2))
    return [g.transpose(1, 2) for g in grads]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdims", default="128")
    parser.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    parser.add_argument("--causal", default="0,1")
    parser.add_argument("--backends", default="cuda_sm90,cuda_sm80")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--settle-ms", type=float, default=200)
    parser.add_argument("--check-max-seqlen", type=int, default=4096)
    parser.add_argument("--out", default=None)
    parser.add_argument("--base-package", default=None,
                        help="another build of the package (e.g. flashattn_base): its --base-backends beside ours")
    parser.add_argument("--base-backends", default="cuda_sm90",
                        help="the base package's backends (NAME or NAME:det), timed as NAME_base (NAME:det_base)")
    parser.add_argument("--softcap", type=float, default=0.0)
    parser.add_argument("--alibi", action="store_true")
    parser.add_argument("--dropout", type=float, default=0.0)
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = []
    for dims in args.hdims.split(","):
        d, dv = (int(x) for x in (dims.split("x") if "x" in dims else (dims, dims)))
        for causal in (bool(int(x)) for x in args.causal.split(",")):
            for s in (int(x) for x in args.seqlens.split(",")):
                b, h = max(1, 16384 // s), 2048 // d
                q, k = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                v, dout = (torch.randn(b, s, h, dv, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                alibi = (2.0 ** (-8.0 * torch.arange(1, h + 1, device="cuda") / h)).float() if args.alibi else None
                mods = {"softcap": args.softcap, "alibi": alibi, "dropout": args.dropout}
                impls = {name: flashattn_backward(name.split(":")[0], q, k, v, dout, causal,
                                                  deterministic=name.endswith(":det"), **mods)
                         for name in args.backends.split(",")}
                if args.base_package:
                    base = importlib.import_module(args.base_package)
                    importlib.import_module(args.base_package + "._ops")
                    for name in args.base_backends.split(","):
                        impls[name + "_base"] = flashattn_backward(name.split(":")[0], q, k, v, dout, causal, base,
                                                                   deterministic=name.endswith(":det"), **mods)
                refused = []
                for name, backend in (("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                                      ("sdpa_flash", SDPBackend.FLASH_ATTENTION)):
                    try:
                        impls[name] = sdpa_backward(backend, q, k, v, dout, causal, args.dropout)
                        impls[name]()
                    except RuntimeError:
                        impls.pop(name, None)
                        refused.append(name)
                row = {"d": d if dv == d else f"{d}x{dv}", "causal": causal, "seqlen": s, "batch": b, "heads": h}
                if refused:
                    row["sdpa_refused"] = refused
                if args.softcap or args.alibi:
                    row.update(softcap=args.softcap, alibi=args.alibi, sdpa_plain=True)
                if args.dropout:
                    row["dropout"] = args.dropout
                if s <= args.check_max_seqlen and not args.dropout:
                    ref = reference_grads(q, k, v, dout, causal, args.softcap, alibi)
                    for name in impls:
                        got = impls[name]()[:3]
                        if name.startswith("sdpa"):  # (SDPA's gradients are (b, h, s, d))
                            got = [g.transpose(1, 2) for g in got]
                        row[f"{name}_maxrel"] = max(((g.float() - r).abs().max() / r.abs().max()).item()
                                                    for g, r in zip(got, ref))
                times = {name: [] for name in impls}
                names = list(impls)
                for r in range(args.rounds):
                    for name in (names if r % 2 == 0 else names[::-1]):
                        times[name].append(bench_ms(impls[name], args.settle_ms))
                flops = 2.5 * 2 * b * h * s * s * (d + dv) / (2 if causal else 1)
                for name, ts in times.items():
                    ms = statistics.median(ts)
                    row[f"{name}_ms"] = ms
                    row[f"{name}_tflops"] = flops / ms / 1e9
                rows.append(row)
                print(json.dumps(row), flush=True)
                del q, k, v, dout, impls
                torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "cudnn": torch.backends.cudnn.version(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
