# Same-process A/B of two builds of the flashattn Python package beside SDPA's cuDNN
# backend, forward, bf16, on the standard grid (16k tokens per batch, hidden 2048,
# h = 2048 / d), each row's three timings taken one after the other on the same
# inputs (torch.randn, (b, s, h, d)) with triton.testing.do_bench (median, L2 flushed
# between calls: the measurement of bench/compare.py).
#   PYTHONPATH=<dir with flashattn/ and flashattn_base/> python3 bench/sm90_ab.py [--hdims 64,128,256]
#       [--seqlens 512,...] [--gap]
# flashattn_base is a copy of the package built from the base commit, its torch ops renamed
# (sed 's/"flashattn::/"flashattn_base::/' _ops.py) so that both register; missing, the
# base column is left out.
# --passes 2 (default): each row timed twice, forward then reverse order, the mean of both.
# --gap: the CLI-vs-compare.py question (docs/performance-sm90.md): one row timed four ways
# (burst of 10 calls after an idle second as `flashattn bench` does; do_bench with the L2
# flush; 300 ms back to back without flush; do_bench again), with the SM clock NVML reports.
import argparse
import json
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

import flashattn

try:
    import flashattn_base
except ImportError:
    flashattn_base = None
try:  # a variant build of the new tree (bench/sm90c_run.sh says which)
    import flashattn_var
except ImportError:
    flashattn_var = None
try:  # a second variant (bench/sm90d_run.sh)
    import flashattn_var2
except ImportError:
    flashattn_var2 = None


def sm_clock():
    try:
        return torch.cuda.clock_rate()
    except Exception:  # no NVML
        return None


def burst_ms(fn, calls=10, warmup=5):
    """`flashattn bench`'s measurement: each call timed alone (events, synchronised), median."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2], times


def sustained_ms(fn, seconds=0.3):
    """Back to back without L2 flush for `seconds`; the median of the second half."""
    events = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        events.append((start, stop))
        if len(events) % 8 == 0:
            events[-8][1].synchronize()  # keep the queue short
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in events[len(events) // 2:])
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hdims", default="64,128,256")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--gap", action="store_true")
    ap.add_argument("--passes", type=int, default=2, choices=(1, 2))
    args = ap.parse_args()
    dev = torch.cuda.get_device_properties(0)
    print(json.dumps({"device": dev.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "base": flashattn_base is not None,
                      "var": flashattn_var is not None, "var2": flashattn_var2 is not None}), flush=True)
    # Timing order base, new, var, cudnn, then reversed: new and var take the two middle
    # places (run 3 of 2026-11-22 measured identical code 1.5% lower at the ends than in the middle).
    impls = {}
    if flashattn_base is not None:
        impls["base"] = flashattn_base.flash_attn_func
    impls["new"] = flashattn.flash_attn_func
    if flashattn_var is not None:
        impls["var"] = flashattn_var.flash_attn_func
    if flashattn_var2 is not None:
        impls["var2"] = flashattn_var2.flash_attn_func

    def sdpa(q, k, v, causal):
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

    with torch.no_grad():
        if args.gap:
            for d, s in ((128, 16384), (128, 8192), (128, 512)):
                b, h = 16384 // s, 2048 // d
                q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                k, v = torch.randn_like(q), torch.randn_like(q)
                flop = 4 * b * h * s * s * d
                for name, fn in (("new", lambda: impls["new"](q, k, v)), ("cudnn", lambda: sdpa(q, k, v, False))):
                    row = {"gap": name, "hdim": d, "seqlen": s}
                    torch.cuda.synchronize()
                    time.sleep(1.0)
                    row["clock_idle"] = sm_clock()
                    ms, times = burst_ms(fn)
                    row["burst"] = round(flop / ms / 1e9)
                    row["burst_each"] = [round(flop / t / 1e9) for t in times]
                    row["clock_after_burst"] = sm_clock()
                    row["do_bench"] = round(flop / do_bench(fn, warmup=25, rep=100, return_mode="median") / 1e9)
                    row["clock_after_do_bench"] = sm_clock()
                    row["sustained_no_flush"] = round(flop / sustained_ms(fn) / 1e9)
                    row["clock_after_sustained"] = sm_clock()
                    row["burst_after_load"] = round(flop / burst_ms(fn)[0] / 1e9)
                    print(json.dumps(row), flush=True)
        for d in (int(x) for x in args.hdims.split(",")):
            for causal in (False, True):
                for s in (int(x) for x in args.seqlens.split(",")):
                    b, h = max(1, 16384 // s), 2048 // d
                    torch.manual_seed(s + d)
                    q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                    k, v = torch.randn_like(q), torch.randn_like(q)
                    flop = 4 * b * h * s * s * d / (2 if causal else 1)
                    row = {"hdim": d, "causal": causal, "seqlen": s}
                    fns = {name: (lambda f=f: f(q, k, v, causal=causal)) for name, f in impls.items()}
                    fns["cudnn"] = lambda: sdpa(q, k, v, causal)
                    ref = fns["cudnn"]().transpose(1, 2).float()
                    for name, fn in fns.items():
                        if name != "cudnn":
                            row[name + "_err"] = float((fn().float() - ref).abs().max())
                    # Twice, the second time in reverse order, mean of the two: the card's clock
                    # drifts within a row's measurements (docs/performance-sm90.md, sm90c).
                    ms = {name: [] for name in fns}
                    for order in (list(fns), list(fns)[::-1])[:args.passes]:
                        for name in order:
                            ms[name].append(do_bench(fns[name], warmup=25, rep=100, return_mode="median"))
                    for name in fns:
                        row[name] = round(flop / (sum(ms[name]) / len(ms[name])) / 1e9, 1)
                    row["new/cudnn"] = round(row["new"] / row["cudnn"], 3)
                    if "base" in row:
                        row["new/base"] = round(row["new"] / row["base"], 3)
                    if "var" in row:
                        row["new/var"] = round(row["new"] / row["var"], 3)
                    if "var2" in row:
                        row["new/var2"] = round(row["new"] / row["var2"], 3)
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
