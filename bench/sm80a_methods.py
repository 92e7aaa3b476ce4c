#!/usr/bin/env python3
"""Session 8 (issue 4, helper sm80a), step 0: why bench/sm80_tune (the tuning harness) and bench/compare.py
disagree on the cuda_sm80 forward at d256 short rows.

Same process, compare.py's tensors ((b, s, h, d) bf16 torch.randn, seed seqlen + hdim, 16k tokens, hidden 2048):
  ours     compare._flashattn_sm80 (flash_attn_func under use_backend("cuda_sm80"): compare.py's call)
  ours_raw the same library call through flashattn._runtime.run with a preallocated out and no LSE output,
           i.e. what the harness's "table" row calls (cuda_sm80::run with lse = null, no allocations)
  ours_b   compare.py's call on a second build of the extension (package flashattn_b, when importable: the
           candidate table, bench/sm80a_table.py), so that a table change is timed as compare.py times it
  fa2      compare._sdpa(FLASH_ATTENTION) (compare.py's peer)
each timed by three methods, in rounds whose order of implementations reverses (power/clock order effect):
  dobench  compare.bench_ms = triton do_bench (25 ms warm-up, 100 ms of reps, L2 cleared by a 256 MB
           zero_ before each rep, median), what compare.py reports; since session 8 after 200 ms of the
           call's own back-to-back launches (compare.settle); dobench0 without them (compare.py before)
  harness  bench/sm80_tune's median_ms with SM80_MIN_MS=100: 5 launches to estimate, reps filling
           >= 100 ms of kernel time (>= 25), 3 warm-ups, a 256 MB fill before each timed launch, median
  b2b      back to back without a flush, events around 100 ms of launches, mean (steady state)
Also: host microseconds per call (no sync; would the GPU wait for the host?), and the kernel(s) each call
launches (torch.profiler: name with the TileShape template arguments, grid, block).

    PYTHONPATH=<dir with the flashattn package> sm80a_methods.py [ROUNDS] [--rows ...] [--impls ...]
        [--methods ...] [--prelude-rows ...] > methods.jsonl
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms and the backends' calls)

import flashattn  # noqa: E402
from flashattn import _runtime as rt  # noqa: E402
from torch.nn.attention import SDPBackend  # noqa: E402

try:
    import flashattn_b  # the candidate table's build (its torch ops renamed flashattnb::)
except ImportError:
    flashattn_b = None

parser = argparse.ArgumentParser()
parser.add_argument("rounds", nargs="?", type=int, default=2)
parser.add_argument("--rows", default="0:512,0:1024,0:2048,1:512,1:1024", help="causal:seqlen,... (d256)")
parser.add_argument("--impls", default="ours,ours_raw,ours_b,fa2")
parser.add_argument("--methods", default="dobench,harness,b2b",
                    help="dobench = compare.bench_ms as compare.py now times (settle first), dobench0 = "
                         "without the settle (compare.py before session 8), harness, b2b")
parser.add_argument("--prelude-rows", default="",
                    help="causal:seqlen,... also timed (dobench0 / dobench) right after 1 s idle or 200 ms "
                         "of cuDNN's forward: does the settle remove the predecessor's effect?")
cli = parser.parse_args()
ROWS = [(256, bool(int(c)), int(s)) for c, s in (x.split(":") for x in cli.rows.split(","))]
PRELUDE_ROWS = [(256, bool(int(c)), int(s)) for c, s in (x.split(":") for x in cli.prelude_rows.split(",") if x)]
ROUNDS = cli.rounds
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")


def harness_ms(fn, min_total_ms=100.0):
    """bench/sm80_tune.cu median_ms(launch, false, 100): the harness's sustained timing."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(5):
        fn()
    b.record()
    b.synchronize()
    reps = max(25, int(min_total_ms / max(a.elapsed_time(b) / 5, 1e-3)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    for r in range(reps):
        flush.fill_(r & 127)
        starts[r].record()
        fn()
        ends[r].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return times[len(times) // 2]


def b2b_ms(fn, total_ms=100.0):
    """Mean of back-to-back launches over ~total_ms (no flush): the steady state."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    a.record()
    for _ in range(5):
        fn()
    b.record()
    b.synchronize()
    n = max(10, int(total_ms / max(a.elapsed_time(b) / 5, 1e-3)))
    a.record()
    for _ in range(n):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / n


def host_us(fn, n=200):
    """Host time per call with the GPU queue deep (no sync inside): Python + launch cost."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return round(host, 1)


def raw_call(q, k, v, causal):
    """The library call as the harness makes it: preallocated out, no LSE, no per-call allocation."""
    out = torch.empty_like(q)
    args = {"q": q, "k": k, "v": v, "out": out, "lse": None, "softmax_scale": None, "causal": causal,
            "window_left": -1, "window_right": 0 if causal else -1, "softcap": 0.0, "alibi_slopes": None,
            "dropout_p": 0.0, "sink": None}

    def run():
        with flashattn.use_backend("cuda_sm80"):
            rt.run("forward", args, q.device)
        return out
    return run


def b_call(q, k, v, causal):
    def run():
        with flashattn_b.use_backend("cuda_sm80"):
            return flashattn_b.flash_attn_func(q, k, v, causal=causal)
    return run


def kernels_of(fn, tag):
    """Kernels one call launches: names (template arguments = the TileShape), grid and block."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    path = f"/tmp/sm80a-trace-{tag}.json"
    prof.export_chrome_trace(path)
    events = json.load(open(path)).get("traceEvents", [])
    found = []
    for e in events:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            found.append({"name": e.get("name", "")[:400], "grid": a.get("grid"), "block": a.get("block"),
                          "smem": a.get("shared memory"), "regs": a.get("registers per thread"),
                          "us": e.get("dur")})
    return found


print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                  "flashattn": flashattn.__version__, "sm80": flashattn.backend_compiled("cuda_sm80"),
                  "sm90": flashattn.backend_compiled("cuda_sm90"),
                  "b": flashattn_b is not None}), flush=True)
for hdim, causal, seqlen in sorted(set(ROWS) | set(PRELUDE_ROWS), key=lambda r: (r[1], r[2])):
    batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
    torch.manual_seed(seqlen + hdim)
    q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn_like(q, requires_grad=True)
    v = torch.randn_like(q, requires_grad=True)
    flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
    impls = {"ours": compare._flashattn_sm80(q, k, v, causal), "ours_raw": raw_call(q, k, v, causal),
             "fa2": compare._sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)}
    if flashattn_b is not None:
        impls = {"ours": impls["ours"], "ours_raw": impls["ours_raw"], "ours_b": b_call(q, k, v, causal),
                 "fa2": impls["fa2"]}
    impls = {n: f for n, f in impls.items() if n in cli.impls.split(",")}
    ours_names = [n for n in impls if n != "fa2"]
    row = {"hdim": hdim, "causal": causal, "seqlen": seqlen}
    with torch.no_grad():
        if (hdim, causal, seqlen) in PRELUDE_ROWS:
            cudnn = compare._sdpa(SDPBackend.CUDNN_ATTENTION)(q, k, v, causal)
            for name in [n for n in ("ours_b", "ours", "fa2") if n in impls][:2]:
                for prelude in ("idle", "cudnn"):
                    for settle_ms in (0, 200):
                        if prelude == "idle":
                            torch.cuda.synchronize()
                            time.sleep(1.0)
                        else:
                            compare.settle(cudnn, 200)
                        ms = compare.bench_ms(impls[name], settle_ms=settle_ms)
                        row[f"prelude_{name}_{prelude}_settle{settle_ms}"] = round(flop / ms / 1e9, 1)
            del cudnn
        if (hdim, causal, seqlen) not in ROWS:
            print(json.dumps(row), flush=True)
            continue
        ref = impls["fa2"]().transpose(1, 2).float()
        for name in ours_names:
            row[f"max_diff_{name}_vs_fa2"] = round((impls[name]().float() - ref).abs().max().item(), 4)
        del ref
        for name in ours_names:
            row[f"kernels_{name}"] = kernels_of(impls[name], f"{name}-{seqlen}-{int(causal)}")
        for name, fn in impls.items():
            row[f"host_us_{name}"] = host_us(fn)
        methods = {"dobench": compare.bench_ms, "dobench0": lambda fn: compare.bench_ms(fn, settle_ms=0),
                   "harness": harness_ms, "b2b": b2b_ms}
        methods = {m: methods[m] for m in cli.methods.split(",")}
        readings = {f"{n}_{m}": [] for n in impls for m in methods}
        for r in range(ROUNDS):
            order = list(impls.items()) if r % 2 == 0 else list(reversed(impls.items()))
            for method, timer in methods.items():
                for name, fn in order:
                    fn()
                    torch.cuda.synchronize()
                    readings[f"{name}_{method}"].append(round(flop / timer(fn) / 1e9, 1))
    for key, values in readings.items():
        row[key] = round(statistics.median(values), 1)
        row[key + "_rounds"] = values
    for method in methods:
        for name in ours_names:
            row[f"ratio_{name}_{method}"] = round(row[f"{name}_{method}"] / row[f"fa2_{method}"], 3)
    print(json.dumps(row), flush=True)
    del q, k, v, impls
    torch.cuda.empty_cache()
