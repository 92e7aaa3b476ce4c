#!/usr/bin/env python3
"""flashattn beside the peers on one GPU, in one process.

Peers: PyTorch SDPA's FLASH_ATTENTION (FlashAttention 2 kernels) and CUDNN_ATTENTION
backends, and the flash_attn (FA2) / flash_attn_interface (FA3) packages when importable.

Grid (the FlashAttention papers' standard one): forward and backward, causal and not,
head dim 64/128/256, seqlen 512..16k, 16k tokens per batch (b = 16384 / s), hidden 2048
(h = 2048 / d), bf16. FLOPs: forward 4 b s^2 h d (halved when causal), backward 2.5x.
Decode case: q length 1, 32 query heads over 8 KV heads, d 128, 8192 cached keys,
batch 64, reported in TB/s of K/V read. Ceiling: cuBLAS (torch.matmul) on an 8192^3 GEMM in
the grid's dtype, the practical tensor-core limit of the card that day; issue 6's headline
(700 TFLOP/s at d128) is 97% of the 721 the anchor's card read there, so the report states the
d128 non-causal rows from 8k as a share of this run's ceiling too.

Method (see the GPU measuring method): every backend runs in the same process on the same
inputs; each timing is the median of triton.testing.do_bench (CUDA events) after warm-up;
each row is timed in --rounds rounds (default 2) with the order of the backends reversing
from round to round, and reports each backend's median over them (a GPU at its power limit
runs a kernel timed right after a low-power one at a higher clock, so a fixed order is not
neutral: bench/sm90w_order_check.py measures it); and before each timing the backend's own call
runs back to back for --settle-ms (default 200), so that every reading starts from that backend's
own sustained clock rather than from whatever ran before it (do_bench's 25 ms warm-up is shorter
than the clock's response: in compare-20261122-104626 the sm80 forward read 6% lower at d256
s = 512 in the round where it followed the sm90 forward than in the one where it followed FA2);
each tensor of the grid is 64 MB, larger than L2. Rows flashattn cannot run print as
"n/a (reason)". Writes CSV, JSON and PNG plots under bench/results/.

    python bench/compare.py                       # the whole grid + decode
    python bench/compare.py --hdims 128 --seqlens 1024,4096 --modes fwd
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import nullcontext

import torch
import torch.nn.functional as F

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # very old torch
    SDPBackend = sdpa_kernel = None

try:
    import flashattn
except ImportError as e:
    flashattn = None
    FLASHATTN_IMPORT_ERROR = str(e)

try:
    import flash_attn as fa2
except Exception:
    fa2 = None
try:
    import flash_attn_interface as fa3
except Exception:
    try:
        from flash_attn_3 import flash_attn_interface as fa3
    except Exception:
        fa3 = None

TOKENS = 16384
HIDDEN = 2048


# ----------------------------------------------------------------------------------------
# Timing.


# Milliseconds of back-to-back calls of the timed function right before each timing (--settle-ms).
SETTLE_MS = 200.0


def settle(fn, ms) -> None:
    """Runs fn back to back for about ms milliseconds (the GPU's clock follows its power draw over
    a few hundred ms; this makes the timing that follows start from fn's own sustained state)."""
    if ms <= 0:
        return
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    for _ in range(max(1, int(ms / once))):
        fn()


def bench_ms(fn, warmup_ms=25, rep_ms=100, settle_ms=None) -> float:
    """Median milliseconds of fn() on the GPU (CUDA events), after settle(fn, settle_ms)."""
    settle(fn, SETTLE_MS if settle_ms is None else settle_ms)
    try:
        from triton.testing import do_bench
        return do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")
    except ImportError:
        pass
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    for _ in range(max(1, int(warmup_ms / once))):
        fn()
    times = []
    for _ in range(max(5, int(rep_ms / once))):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def short_reason(e: Exception) -> str:
    """The library's reason, without the boilerplate: which backend said what."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("no backend can run") and ": " in text:
        clauses = [c.strip() for c in text.split(": ", 1)[1].split(";")]
        kept = [c for c in clauses if c and not c.endswith("not compiled into this build")]
        text = "; ".join(kept or clauses)
    return text[:140]


# ----------------------------------------------------------------------------------------
# Backends: each returns a callable computing attention on (b, s, h, d) tensors.


# --dropout P: every backend's forward and backward with dropout probability P (SDPA's through dropout_p; its
# FlashAttention-2 and cuDNN kernels both draw the mask in the kernel). The grid's FLOP counts are the same.
DROPOUT_P = 0.0


def _sdpa(backend):
    def make(q, k, v, causal):
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

        def run():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(qt, kt, vt, dropout_p=DROPOUT_P, is_causal=causal)
        return run
    return make


def _flashattn(q, k, v, causal):
    return lambda: flashattn.flash_attn_func(q, k, v, dropout_p=DROPOUT_P, causal=causal)


def _flashattn_sm80(q, k, v, causal):
    """The Ampere-class kernels on a Hopper GPU (the fallback path, and issue 4's peer race)."""
    def run():
        if torch.is_grad_enabled():
            raise RuntimeError("backward: not timed here (bench/backward_compare.py --backends cuda_sm80)")
        with flashattn.use_backend("cuda_sm80"):
            return flashattn.flash_attn_func(q, k, v, dropout_p=DROPOUT_P, causal=causal)
    return run


def _fa2(q, k, v, causal):
    return lambda: fa2.flash_attn_func(q, k, v, dropout_p=DROPOUT_P, causal=causal)


def _fa3(q, k, v, causal):
    def run():
        out = fa3.flash_attn_func(q, k, v, causal=causal)
        return out[0] if isinstance(out, tuple) else out
    return run


def backends():
    found = {}
    if flashattn is not None:
        found["flashattn"] = _flashattn
        hopper = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9
        if hopper and flashattn.backend_compiled("cuda_sm80") and flashattn.backend_compiled("cuda_sm90"):
            found["flashattn_sm80"] = _flashattn_sm80
    if sdpa_kernel is not None:
        found["sdpa_flash"] = _sdpa(SDPBackend.FLASH_ATTENTION)
        found["sdpa_cudnn"] = _sdpa(SDPBackend.CUDNN_ATTENTION)
    if fa2 is not None:
        found["fa2"] = _fa2
    if fa3 is not None and DROPOUT_P == 0.0:
        found["fa3"] = _fa3
    return found


def measure(make, q, k, v, causal, mode):
    """TFLOP-free: returns milliseconds, or raises with the reason it cannot run."""
    fn = make(q, k, v, causal)
    if mode == "fwd":
        with torch.no_grad():
            fn()
            torch.cuda.synchronize()
            return bench_ms(fn)
    out = fn()
    grad = torch.randn_like(out)
    torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
    torch.cuda.synchronize()
    return bench_ms(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True))


def run_grid(args, impls):
    rows = []
    for hdim in args.hdims:
        for causal in (False, True):
            for seqlen in args.seqlens:
                batch, heads = max(1, TOKENS // seqlen), HIDDEN // hdim
                torch.manual_seed(seqlen + hdim)
                q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=args.dtype, requires_grad=True)
                k = torch.randn_like(q, requires_grad=True)
                v = torch.randn_like(q, requires_grad=True)
                flop_fwd = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
                for mode in args.modes:
                    flop = flop_fwd * (2.5 if mode == "bwd" else 1.0)
                    row = {"mode": mode, "hdim": hdim, "causal": causal, "seqlen": seqlen, "batch": batch,
                           "heads": heads}
                    # The H200 runs these kernels at its power limit, and a kernel timed right after a
                    # low-power one starts at a higher clock (bench/sm90w_order_check.py), so no fixed
                    # order is neutral. In compare-20261122-104626 cuDNN's forward read up to 11% (mean
                    # 1.7%) more in the first round, where it came last, than in the reversed one. Each
                    # round times every backend, the order reversing from round to round, and a row
                    # reports each backend's median.
                    readings = {name: [] for name in impls}
                    for r in range(args.rounds):
                        order = list(impls.items()) if r % 2 == 0 else list(reversed(impls.items()))
                        for name, make in order:
                            if isinstance(row.get(name), str):
                                continue  # could not run in an earlier round
                            try:
                                ms = measure(make, q, k, v, causal, mode)
                                readings[name].append(round(flop / ms / 1e9, 1))
                            except Exception as e:  # a backend that cannot run this row says why
                                row[name] = f"n/a ({short_reason(e)})"
                            torch.cuda.synchronize()
                    for name, values in readings.items():
                        if values and not isinstance(row.get(name), str):
                            row[name] = round(statistics.median(values), 1)
                            if len(values) > 1:
                                row[name + "_rounds"] = values
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                del q, k, v
                torch.cuda.empty_cache()
    return rows


# ----------------------------------------------------------------------------------------
# Decode: q length 1 over a long KV cache (memory-bound: TB/s of K/V read).


def run_decode(args):
    b, hq, hk, d, sk = args.decode_batch, 32, 8, 128, args.decode_keys
    torch.manual_seed(0)
    q = torch.randn(b, 1, hq, d, device="cuda", dtype=args.dtype)
    k_cache = torch.randn(b, sk, hk, d, device="cuda", dtype=args.dtype)
    v_cache = torch.randn_like(k_cache)
    kv_bytes = 2 * k_cache.numel() * k_cache.element_size()
    seqlens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
    cases = {}
    if flashattn is not None:
        cases["flashattn"] = lambda: flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens)
    if sdpa_kernel is not None:
        qt, kt, vt = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)
        for name, be in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
            def run(be=be):
                with sdpa_kernel([be]):
                    return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
            cases[name] = run
    if fa2 is not None:
        cases["fa2"] = lambda: fa2.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens)
    if fa3 is not None:
        cases["fa3"] = lambda: fa3.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens)
    row = {"mode": "decode", "batch": b, "heads": hq, "heads_kv": hk, "hdim": d, "keys": sk,
           "kv_gbytes": round(kv_bytes / 1e9, 3)}
    for name, fn in cases.items():
        try:
            with torch.no_grad():
                fn()
                torch.cuda.synchronize()
                ms = bench_ms(fn)
            row[name] = round(kv_bytes / ms / 1e9, 3)  # TB/s
            row[name + "_us"] = round(ms * 1e3, 1)
        except Exception as e:
            row[name] = f"n/a ({short_reason(e)})"
    print(json.dumps(row), flush=True)
    return row


def run_ceiling(args):
    """TFLOP/s of torch.matmul (cuBLAS) on an n^3 GEMM in the grid's dtype, timed as the grid's rows are."""
    n = args.ceiling_n
    a = torch.randn(n, n, device="cuda", dtype=args.dtype)
    b = torch.randn(n, n, device="cuda", dtype=args.dtype)
    c = torch.empty(n, n, device="cuda", dtype=args.dtype)

    def fn():
        return torch.matmul(a, b, out=c)

    readings = []
    for _ in range(args.rounds):
        readings.append(2 * n ** 3 / bench_ms(fn) / 1e9)
    row = {"mode": "gemm", "n": n, "cublas": round(statistics.median(readings), 1),
           "cublas_rounds": [round(x, 1) for x in readings]}
    print(json.dumps(row), flush=True)
    return row


# ----------------------------------------------------------------------------------------
# Reporting.


def environment():
    info = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "flashattn": getattr(flashattn, "__version__", None),
            "flash_attn": getattr(fa2, "__version__", None), "flash_attn_3": "present" if fa3 else None}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(gpu=p.name, sms=p.multi_processor_count, memory_gib=round(p.total_memory / 2**30, 1))
    try:
        info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                        capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except Exception:
        info["driver"] = None
    return info


def ratio_to_best_peer(row, names):
    ours = row.get("flashattn")
    peers = [row[n] for n in names if not n.startswith("flashattn") and isinstance(row.get(n), (int, float))]
    if not isinstance(ours, (int, float)) or not peers:
        return None
    return round(ours / max(peers), 2)


def markdown_table(rows, names):
    lines = ["| mode | d | causal | seqlen | " + " | ".join(names) + " | flashattn / best peer |",
             "|---" * (5 + len(names)) + "|"]
    for r in rows:
        ratio = ratio_to_best_peer(r, names)
        cells = [str(r.get(n, "")) for n in names]
        lines.append(f"| {r['mode']} | {r['hdim']} | {r['causal']} | {r['seqlen']} | " + " | ".join(cells) +
                     f" | {ratio if ratio is not None else 'n/a'} |")
    return "\n".join(lines)


def plot(rows, names, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plots")
        return None
    # fwd panels first; one colour per backend across panels.
    panels = sorted({(r["mode"], r["hdim"], r["causal"]) for r in rows}, key=lambda p: (p[0] != "fwd", p[1], p[2]))
    colours = {name: f"C{i}" for i, name in enumerate(names)}
    cols = 4
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.3 * nrows), squeeze=False)
    for ax, (mode, hdim, causal) in zip(axes.flat, panels):
        sel = [r for r in rows if (r["mode"], r["hdim"], r["causal"]) == (mode, hdim, causal)]
        xs = [r["seqlen"] for r in sel]
        for name in names:
            ys = [r.get(name) if isinstance(r.get(name), (int, float)) else float("nan") for r in sel]
            if any(not math.isnan(y) for y in ys):
                ax.plot(xs, ys, marker="o", label=name, color=colours[name],
                        linewidth=2.5 if name == "flashattn" else 1.2)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x // 1024}k" if x >= 1024 else str(x) for x in xs])
        ax.set_title(f"{mode} d={hdim} {'causal' if causal else 'non-causal'}")
        ax.set_xlabel("seqlen")
        ax.set_ylabel("TFLOP/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def main():
    global SETTLE_MS, DROPOUT_P
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default="fwd,bwd")
    parser.add_argument("--hdims", default="64,128,256")
    parser.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--rounds", type=lambda x: max(1, int(x)), default=2,
                        help="timings per backend and row, in alternating order (median reported)")
    parser.add_argument("--decode-batch", type=int, default=64)
    parser.add_argument("--decode-keys", type=int, default=8192)
    parser.add_argument("--settle-ms", type=float, default=SETTLE_MS,
                        help="back-to-back calls of each backend right before its timing (0: none)")
    parser.add_argument("--no-decode", action="store_true")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="dropout probability of every backend's grid rows (FA3 has none: left out then)")
    parser.add_argument("--no-grid", action="store_true")
    parser.add_argument("--ceiling-n", type=int, default=8192, help="the cuBLAS GEMM ceiling's size (0: skip)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--tag", default=time.strftime("%Y%m%d-%H%M%S"))
    args = parser.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    args.hdims = [int(x) for x in args.hdims.split(",")]
    args.seqlens = [int(x) for x in args.seqlens.split(",")]
    args.dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    SETTLE_MS = args.settle_ms
    DROPOUT_P = args.dropout

    if not torch.cuda.is_available():
        sys.exit("bench/compare.py needs a CUDA GPU")
    if flashattn is None:
        print(f"flashattn not importable ({FLASHATTN_IMPORT_ERROR}): its column is omitted")
    env = environment()
    print(json.dumps(env))
    impls = backends()
    names = list(impls)
    rows = [] if args.no_grid else run_grid(args, impls)
    decode = None if args.no_decode else run_decode(args)
    ceiling = run_ceiling(args) if args.ceiling_n > 0 else None

    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"compare-{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump({"environment": env, "dtype": "bf16" if args.dtype == torch.bfloat16 else "fp16", "dropout": args.dropout, "grid": rows,
                   "decode": decode, "ceiling": ceiling,
                   "method": "median of triton.testing.do_bench (warmup 25 ms, rep 100 ms), bf16 unless noted, "
                             f"same process for every backend, each timing after {args.settle_ms:g} ms of that "
                             f"backend's own calls; per row, the median over {args.rounds} rounds in alternating "
                             "order (<name>_rounds)"}, f, indent=1)
    if rows:
        with open(base + ".csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["mode", "hdim", "causal", "seqlen", "batch", "heads"] + names +
                                    ["flashattn_over_best_peer"], extrasaction="ignore")
            writer.writeheader()
            for r in rows:
                writer.writerow({**r, "flashattn_over_best_peer": ratio_to_best_peer(r, names)})
    png = plot(rows, names, base + ".png") if rows else None

    report = [f"# {env.get('gpu')} | driver {env.get('driver')} | CUDA {env.get('cuda')} | torch {env.get('torch')} | "
              f"cuDNN {env.get('cudnn')} | flashattn {env.get('flashattn')}"]
    if rows:
        report += ["", f"TFLOP/s, {'bf16' if args.dtype == torch.bfloat16 else 'fp16'}, 16k tokens per batch, "
                   "hidden 2048 (bwd counted as 2.5x fwd FLOPs); median of do_bench after "
                   f"{args.settle_ms:g} ms of the backend's own calls, then the median over "
                   f"{args.rounds} rounds per row with the backends' order reversing each round", "", markdown_table(rows, names)]
    if decode:
        report += ["", f"Decode (q len 1, {decode['heads']}/{decode['heads_kv']} heads, d {decode['hdim']}, "
                   f"{decode['keys']} keys, batch {decode['batch']}, {decode['kv_gbytes']} GB K/V): TB/s of K/V read", ""]
        for name in names:
            if name in decode:
                us = decode.get(name + "_us")
                report.append(f"- {name}: {decode[name]}" + (f" ({us} us)" if us else ""))
    if ceiling:
        dtype = "bf16" if args.dtype == torch.bfloat16 else "fp16"
        report += ["", f"Ceiling: cuBLAS {dtype} GEMM {ceiling['n']}^3 (torch.matmul), {ceiling['cublas']} TFLOP/s "
                   f"(median of {args.rounds} rounds {ceiling['cublas_rounds']})"]
        for r in rows:
            value = r.get("flashattn")
            if r["mode"] == "fwd" and r["hdim"] == 128 and not r["causal"] and r["seqlen"] >= 8192 and \
                    isinstance(value, (int, float)):
                report.append(f"- flashattn fwd d128 non-causal {r['seqlen']}: {value} TFLOP/s = "
                              f"{100 * value / ceiling['cublas']:.1f}% of it")
    text = "\n".join(report) + "\n"
    with open(base + ".md", "w") as f:
        f.write(text)
    print()
    print(text)
    print(f"wrote {base}.md, {base}.json" + (f", {base}.csv" if rows else "") + (f", {png}" if png else ""))


if __name__ == "__main__":
    main()
