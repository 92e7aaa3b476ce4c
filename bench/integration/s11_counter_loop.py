#!/usr/bin/env python3
"""Session 11 (issue 6): the cost of zeroing the dynamic schedule's counter, memset launch vs stream write.

Back-to-back calls timed as a block (no L2 flush, no per-call events): the GPU runs ahead of Python, so
the block's time per call is the kernel plus whatever the stream puts before it. Builds alternate
block by block (ROUNDS blocks each, the order reversing every round), median per build; the non-causal
row runs the static schedule (no counter reset in either build) and is the noise gauge. Then the same
calls captured in a CUDA graph and replayed.
    PYTHONPATH=<pyroot with flashattn_base, flashattn_wv> python3 s11_counter_loop.py base,wv
"""
import json
import statistics
import sys

import importlib
import torch

builds = sys.argv[1].split(",")
impls = {b: importlib.import_module("flashattn_" + b).flash_attn_func for b in builds}
ROUNDS, BLOCK_MS = 8, 40.0


def time_block(fn, n):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / n  # us per call


def graph_of(fn, n):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return g


with torch.no_grad():
    for d, causal, s in [(64, True, 512), (128, True, 512), (256, True, 512), (64, True, 1024), (128, True, 1024),
                         (256, True, 1024), (128, False, 512)]:
        b, h = 16384 // s, 2048 // d
        torch.manual_seed(s + d)
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        fns = {name: (lambda f=f: f(q, k, v, causal=causal)) for name, f in impls.items()}
        ref = fns[builds[0]]().float()
        err = {name: float((fn().float() - ref).abs().max()) for name, fn in fns.items()}
        once = time_block(fns[builds[0]], 20)
        n = max(20, int(BLOCK_MS * 1000 / once))
        for fn in fns.values():
            time_block(fn, n)  # warm-up
        us = {name: [] for name in fns}
        for r in range(ROUNDS):
            order = builds if r % 2 == 0 else builds[::-1]
            for name in order:
                us[name].append(time_block(fns[name], n))
        graphs = {name: graph_of(fn, 20) for name, fn in fns.items()}
        gus = {name: [] for name in fns}
        for r in range(ROUNDS):
            order = builds if r % 2 == 0 else builds[::-1]
            for name in order:
                g = graphs[name]
                gus[name].append(time_block(g.replay, max(1, n // 20)) / 20)
        row = {"d": d, "causal": causal, "s": s, "calls_per_block": n, "err_vs_" + builds[0]: err}
        for name in fns:
            row[name + "_us"] = round(statistics.median(us[name]), 2)
            row[name + "_us_spread"] = round(max(us[name]) - min(us[name]), 2)
            row[name + "_graph_us"] = round(statistics.median(gus[name]), 2)
        print(json.dumps(row), flush=True)
