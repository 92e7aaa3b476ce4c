# Same-process A/B of several builds of the flashattn Python package beside SDPA's cuDNN backend
# (helper sm90r, session 9: d64 long rows with wider key blocks), forward, bf16, on the standard grid
# (16k tokens per batch, hidden 2048, h = 2048 / d). bench/sm90s_ab.py's measurement (each row's
# timings on the same inputs with triton.testing.do_bench, median, L2 flushed between calls; the
# column order rotated from row to row, then reversed; mean of the two), plus bench/compare.py's
# settle: each timing starts after --settle-ms of back-to-back calls of that column's own function
# (the H200 is power-limited: a kernel timed right after a low-power one reads high).
#   PYTHONPATH=<dir with the packages> python3 bench/sm90r_ab.py --builds base,w2,w3,ctrl
# Build NAME is imported as package flashattn_NAME (bench/sm90_device_common.sh sm90_build_py). "ctrl"
# is base's extension installed a second time: identical kernels, its ratio is the noise floor.
import argparse
import importlib
import json
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench


def settle(fn, ms):
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


def import_builds(builds, attribute=None):
    """Build NAME's `attribute` (without one, its package) for each name of the comma-separated list (package
    flashattn_NAME, "new": flashattn); a build that does not import is reported as a JSON line and left out."""
    impls = {}
    for name in builds.split(","):
        try:
            module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
        except ImportError as e:
            print(json.dumps({"missing": name, "error": str(e)}), flush=True)
            continue
        impls[name] = module if attribute is None else getattr(module, attribute)
    return impls


def time_rotated(fns, row_index, settle_ms, rep, warmup=15):
    """Mean milliseconds of each column: do_bench medians, each after settle_ms of the column's own calls, the
    column order rotated by row_index and then reversed (the mean of the two)."""
    names = list(fns)
    shift = row_index % len(names)
    names = names[shift:] + names[:shift]
    ms = {name: [] for name in fns}
    for order in (names, names[::-1]):
        for name in order:
            settle(fns[name], settle_ms)
            ms[name].append(do_bench(fns[name], warmup=warmup, rep=rep, return_mode="median"))
    return {name: sum(v) / len(v) for name, v in ms.items()}


def time_paired(fns, row_index, settle_ms, rounds, flush_bytes=256 << 20):
    """--paired: the builds' calls interleaved call by call (rounds x one call of each build, the order rotated
    every round), each timed alone with CUDA events after an L2 flush. Every build then sees the same clock
    and power state within a round, so the drift between do_bench's separate measurements (identical builds
    read up to +-6% apart per row in session 24) cancels in the per-round ratios (identical builds: +-0.2%).
    Returns each build's median milliseconds and, per build, the median over rounds of the first build's time
    divided by its time."""
    names = list(fns)
    flush = torch.empty(flush_bytes, dtype=torch.int8, device="cuda")
    settle(fns[names[0]], settle_ms)
    events = []
    for r in range(rounds):
        shift = (row_index + r) % len(names)
        order = names[shift:] + names[:shift]
        round_events = {}
        for name in order:
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fns[name]()
            end.record()
            round_events[name] = (start, end)
        events.append(round_events)
    torch.cuda.synchronize()
    times = [{name: start.elapsed_time(end) for name, (start, end) in ev.items()} for ev in events]
    ms = {name: median([t[name] for t in times]) for name in names}
    ratio = {name: median([t[names[0]] / t[name] for t in times]) for name in names}
    return ms, ratio


def time_sustained(fns, row_index, settle_ms, rounds, calls, flush_bytes=256 << 20, on_stint=None):
    """--sustained: the builds interleaved stint by stint. Each round, in an order rotated every round, each
    build runs settle_ms of back-to-back calls (each after an L2 flush, as do_bench's) and then `calls` more,
    each timed with CUDA events; its time in the round is their median. Unlike time_paired, every build runs
    at its own sustained load before it is timed, as in the grid: at the H200's power cap a kernel that spends
    less energy per call gets a higher clock (session 15), which call-by-call interleaving hides by giving every
    build the same clock (session 26: the causal K/V multicast off read +2..+4% paired and 1.7-3.6% below its
    old ratio to cuDNN in the grid). Stints of 150, 400 and 1000 ms read alike (session 27, s27_stints.sh): as
    the grid on d128 non-causal 16k and d256 causal 8k, ~4% above it on d128 causal 16k at every length (not
    explained; the grid settles without flushes and times four backends per row). Adjacent stints share the
    slow drift of the card's state; identical builds read within +-0.6% (session 26) to +-2.4% (session 27,
    three passes, s27_onehead.sh). Returns the
    median milliseconds and, per build, the median over rounds of the first build's time divided by its time.
    on_stint(name, round, wall-clock start, wall-clock end, median ms), when given, after each stint."""
    names = list(fns)
    flush = torch.empty(flush_bytes, dtype=torch.int8, device="cuda")

    def flushed(fn):
        flush.zero_()
        fn()

    times = []
    for r in range(rounds):
        shift = (row_index + r) % len(names)
        stint = {}
        for name in names[shift:] + names[:shift]:
            began = time.time()
            settle(lambda: flushed(fns[name]), settle_ms)
            events = []
            for _ in range(calls):
                flush.zero_()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fns[name]()
                end.record()
                events.append((start, end))
            end.synchronize()
            stint[name] = median([start.elapsed_time(end) for start, end in events])
            if on_stint is not None:
                on_stint(name, r, began, time.time(), stint[name])
        times.append(stint)
    ms = {name: median([t[name] for t in times]) for name in names}
    ratio = {name: median([t[names[0]] / t[name] for t in times]) for name in names}
    return ms, ratio


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def head_dims(token):
    """"128" -> (128, 128); "192x128" -> (192, 128): the head dims of Q / K and of V."""
    d, _, dv = token.partition("x")
    return int(d), int(dv or d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default="base,ctrl")
    ap.add_argument("--hdims", default="64", help="comma list of D or DxDV (e.g. 192x128)")
    ap.add_argument("--seqlens", default="1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--rep", type=int, default=50)
    ap.add_argument("--settle-ms", type=float, default=200)
    ap.add_argument("--paired", type=int, default=0,
                    help="also time the builds interleaved call by call over this many rounds (time_paired): "
                         "each row gains 'paired' (TFLOP/s from the median call) and 'paired_speedup' (per "
                         "build, the median over rounds of the first build's time / its time)")
    ap.add_argument("--paired-only", action="store_true",
                    help="with --paired: time only cuDNN with do_bench (its column) and the builds only "
                         "interleaved; each build's column is then its paired TFLOP/s (and cuDNN's too with "
                         "--paired-peer)")
    ap.add_argument("--paired-peer", action="store_true",
                    help="with --paired: cuDNN joins the interleaved calls as the last column ('cudnn' in paired "
                         "and paired_speedup), so that each build's ratio to it has the paired timing's "
                         "resolution rather than do_bench's (the grid's ratio to cuDNN moves by up to +-4% "
                         "between two runs of the same code, session 25)")
    ap.add_argument("--sustained", type=int, default=0,
                    help="time the builds (and cuDNN, last) in interleaved stints over this many rounds "
                         "(time_sustained): each row gains 'sustained' (TFLOP/s) and 'sustained_speedup'; "
                         "no do_bench and no --paired timing then")
    ap.add_argument("--sustained-ms", type=float, default=150,
                    help="--sustained: back-to-back calls before each stint's timed calls")
    ap.add_argument("--sustained-calls", type=int, default=10, help="--sustained: timed calls per stint")
    ap.add_argument("--tokens", type=int, default=16384,
                    help="query tokens per call (batch = tokens / seqlen, at least 1); rows of another count than "
                         "the grid's 16384 carry it")
    ap.add_argument("--backend", default="", help="run every build's calls on this backend (e.g. cuda_sm80)")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="every build and cuDNN with dropout probability P (the error is then against the first "
                         "build, whose drop mask every build shares)")
    ap.add_argument("--alibi", action="store_true",
                    help="ALiBi with the usual slopes 2^(-8 i / h); no cuDNN column (the error is against the "
                         "first build)")
    args = ap.parse_args()
    impls = import_builds(args.builds, "flash_attn_func")
    if args.backend:
        # Every build's calls on that backend (its package's use_backend context).
        packages = import_builds(args.builds)

        def on_backend(name, f):
            def call(*a, **kw):
                with packages[name].use_backend(args.backend):
                    return f(*a, **kw)
            return call
        impls = {name: on_backend(name, f) for name, f in impls.items()}
    dev = torch.cuda.get_device_properties(0)
    print(json.dumps({"device": dev.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "builds": list(impls), "settle_ms": args.settle_ms}), flush=True)

    def sdpa(q, k, v, causal):
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt, dropout_p=args.dropout, is_causal=causal)

    row_index = 0
    with torch.no_grad():
        for d, dv in (head_dims(x) for x in args.hdims.split(",")):
            for causal in (c == "1" for c in args.causal.split(",")):
                for s in (int(x) for x in args.seqlens.split(",")):
                    b, h = max(1, args.tokens // s), 2048 // d
                    torch.manual_seed(s + d + dv)
                    q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                    k = torch.randn_like(q)
                    v = torch.randn(b, s, h, dv, device="cuda", dtype=torch.bfloat16)
                    flop = 2 * b * h * s * s * (d + dv) / (2 if causal else 1)
                    row = {"hdim": d, "causal": causal, "seqlen": s}
                    if args.tokens != 16384:
                        row["tokens"] = b * s
                    if dv != d:
                        row["hdim_v"] = dv
                    slopes = (torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)], device="cuda")
                              if args.alibi else None)
                    fns = {name: (lambda f=f: f(q, k, v, dropout_p=args.dropout, causal=causal,
                                                alibi_slopes=slopes))
                           for name, f in impls.items()}
                    ref = None
                    if not args.alibi:
                        try:
                            cudnn_out = sdpa(q, k, v, causal).transpose(1, 2).float()
                            ref = cudnn_out if args.dropout == 0 else None  # (another drop mask)
                            fns["cudnn"] = lambda: sdpa(q, k, v, causal)
                        except RuntimeError as e:  # a head-dim pair the cuDNN backend does not take
                            row["cudnn_error"] = str(e).splitlines()[0][:160]
                    if ref is None:
                        # ALiBi, or no cuDNN: the error is against the first build (bench/build_check.py checks
                        # the builds against float64).
                        row["alibi" if args.alibi else ("dropout" if args.dropout else "no_cudnn")] = True
                        ref = next(iter(fns.values()))().float()
                    def reseeded(fn):
                        # (dropout: every build's call from the same generator state, so the same drop mask)
                        torch.cuda.manual_seed(s)
                        return fn()
                    if args.dropout and row.get("dropout"):
                        ref = reseeded(next(iter(fns.values()))).float()
                    row["err"] = {name: float((reseeded(fn).float() - ref).abs().max())
                                  for name, fn in fns.items() if name != "cudnn"}
                    builds = {name: fn for name, fn in fns.items() if name != "cudnn"}
                    if args.sustained > 0:
                        interleaved = dict(builds)
                        if "cudnn" in fns:
                            interleaved["cudnn"] = fns["cudnn"]  # last: the first build stays the reference
                        sms, speedup = time_sustained(interleaved, row_index, args.sustained_ms, args.sustained,
                                                      args.sustained_calls)
                        row_index += 1
                        row["sustained"] = {name: round(flop / sms[name] / 1e9, 1) for name in interleaved}
                        row["sustained_speedup"] = {name: round(speedup[name], 4) for name in interleaved}
                        print(json.dumps(row), flush=True)
                        continue
                    paired_only = args.paired > 0 and args.paired_only
                    # --paired-only: do_bench times cuDNN alone (none under --alibi), the builds go interleaved.
                    timed = {n: fn for n, fn in fns.items() if n == "cudnn"} if paired_only else fns
                    ms = time_rotated(timed, row_index, args.settle_ms, args.rep) if timed else {}
                    row_index += 1
                    for name in timed:
                        row[name] = round(flop / ms[name] / 1e9, 1)
                    if args.paired > 0:
                        interleaved = dict(builds)
                        if args.paired_peer and "cudnn" in fns:
                            interleaved["cudnn"] = fns["cudnn"]  # last: the first build stays the reference
                        pms, speedup = time_paired(interleaved, row_index, args.settle_ms, args.paired)
                        row["paired"] = {name: round(flop / pms[name] / 1e9, 1) for name in interleaved}
                        row["paired_speedup"] = {name: round(speedup[name], 4) for name in interleaved}
                        if paired_only:
                            row.update(row["paired"])
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
