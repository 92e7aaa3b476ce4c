#!/usr/bin/env python3
"""The backward's kernels timed one by one (torch.profiler's CUDA activity, the GPU's own clocks), for one or two
builds of the package side by side: per row and build, the median over --calls calls of each kernel class
(preprocess, main: the other backward kernels, other: any further kernel of the call), in microseconds, one JSON
line a row.

    PYTHONPATH=... python3 bench/backward_aux_times.py --packages flashattn,flashattn_base --backends cuda_sm90

Rows: the standard grid's (16k tokens, hidden 2048) at the given head dims and lengths, causal and not, bf16.
Both builds' calls interleave (call i of each in turn), so that clocks drifting over the run meet both alike.
"""

import argparse
import importlib
import json
import statistics

import torch
from torch.profiler import ProfilerActivity, profile


def kernel_class(name):
    for part in ("preprocess", "postprocess"):
        if part in name:
            return part
    return "main" if "backward" in name else "other"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", default="flashattn")
    parser.add_argument("--backends", default="cuda_sm90")
    parser.add_argument("--hdims", default="64,128")
    parser.add_argument("--seqlens", default="512,2048")
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    packages = {name: importlib.import_module(name) for name in args.packages.split(",")}
    for name in packages:
        importlib.import_module(name + "._ops")
    for backend in args.backends.split(","):
        for d in (int(x) for x in args.hdims.split(",")):
            for s in (int(x) for x in args.seqlens.split(",")):
                for causal in (False, True):
                    b, h = max(1, 16384 // s), 2048 // d
                    q, k, v, dout = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(4))
                    runs = {}
                    for name, package in packages.items():
                        ops = package._ops
                        out, lse, rng = ops.fwd(q, k, v, None, causal, -1, -1, 0.0, None, 0.0, None, False, 0)

                        def run(package=package, ops=ops, out=out, lse=lse, rng=rng):
                            with package.use_backend(backend):
                                ops.bwd(dout, q, k, v, out, lse, None, causal, -1, -1, 0.0, None, 0.0, rng, None,
                                        False)
                        for _ in range(3):
                            run()
                        runs[name] = run
                    torch.cuda.synchronize()
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        for _ in range(args.calls):
                            for run in runs.values():
                                run()
                        torch.cuda.synchronize()
                    kernels = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                                     key=lambda e: e.time_range.start)
                    # One stream: a call's kernels follow its preprocess; the calls alternate between the builds.
                    calls = []
                    for event in kernels:
                        if kernel_class(event.name) == "preprocess":
                            calls.append({"preprocess": 0.0, "main": 0.0, "postprocess": 0.0, "other": 0.0})
                        if calls:
                            calls[-1][kernel_class(event.name)] += event.time_range.elapsed_us()
                    if len(calls) != args.calls * len(runs):
                        raise SystemExit(f"{len(calls)} calls profiled, {args.calls * len(runs)} made")
                    samples = {name: {} for name in packages}
                    for index, call in enumerate(calls):
                        name = list(packages)[index % len(packages)]
                        for key, value in call.items():
                            samples[name].setdefault(key, []).append(value)
                    row = {"backend": backend, "d": d, "seqlen": s, "causal": causal}
                    for name in packages:
                        for key, values in samples[name].items():
                            row[f"{name}_{key}_us"] = round(statistics.median(values), 2)
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
