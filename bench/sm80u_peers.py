#!/usr/bin/env python3
"""FA2 (SDPA FLASH_ATTENTION) and, when the flashattn package imports, the cuda_sm80 forward through
it, on bench/compare.py's tensors, each timed two ways (session 6, issue 4, helper sm80u):

- "100ms": compare.bench_ms (triton do_bench: warm-up 25 ms, repetitions for 100 ms, median), what
  bench/compare.py reports;
- "25": bench/sm80_tune's method (3 warm-ups, then 25 launches each after a 256 MB L2-evicting
  memset, CUDA events, median), so that the C++ harness's rows can be set beside FA2 timed the same way.

If sustained clocks differ between ~15 ms and ~100 ms of back-to-back kernels, the two columns of
one implementation differ; that is the candidate explanation for the C++ harness timing the
sm80 forward 4-10% above compare.py on causal rows in session 5 (docs/kernel-notes.md, v10).
Each row: ours_100ms, fa2_100ms, ours_25, fa2_25, then ours_100ms_2, fa2_100ms_2 (second pass: noise).

    PYTHONPATH=<dir with the flashattn package, optional> sm80u_peers.py [DIMS] [SEQLENS] [CAUSAL 0,1]
"""
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms and the backends' calls)

from torch.nn.attention import SDPBackend  # noqa: E402

dims = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128, 256]
seqlens = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [512, 1024, 2048, 4096, 8192, 16384]
causals = [bool(int(x)) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [False, True]
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")


def ms_25(fn):
    """bench/sm80_tune's median_ms: 3 warm-ups, 25 timed launches each after a 256 MB memset."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(25)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(25)]
    for r in range(25):
        flush.fill_(r)
        starts[r].record()
        fn()
        ends[r].record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return times[len(times) // 2]


dev = torch.cuda.get_device_properties(0)
have_ours = compare.flashattn is not None
print(json.dumps({"device": dev.name, "torch": torch.__version__, "ours": have_ours}), flush=True)
for hdim in dims:
    for causal in causals:
        for seqlen in seqlens:
            batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
            torch.manual_seed(seqlen + hdim)
            q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16)
            k = torch.randn_like(q)
            v = torch.randn_like(q)
            flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
            fa2 = compare._sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)
            impls = [("fa2", fa2)]
            if have_ours:
                impls.insert(0, ("ours", compare._flashattn_sm80(q, k, v, causal)))
            row = {"hdim": hdim, "causal": causal, "seqlen": seqlen}
            with torch.no_grad():
                if have_ours:
                    row["max_diff_vs_fa2"] = round(
                        (impls[0][1]().float() - fa2().transpose(1, 2).float()).abs().max().item(), 4)
                for suffix, timer in (("_100ms", compare.bench_ms), ("_25", ms_25), ("_100ms_2", compare.bench_ms)):
                    for name, fn in impls:
                        fn()
                        torch.cuda.synchronize()
                        row[name + suffix] = round(flop / timer(fn) / 1e9, 1)
            if have_ours:
                row["ratio_100ms"] = round((row["ours_100ms"] + row["ours_100ms_2"]) /
                                           (row["fa2_100ms"] + row["fa2_100ms_2"]), 3)
            print(json.dumps(row), flush=True)
            del q, k, v
