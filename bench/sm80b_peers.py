#!/usr/bin/env python3
"""The cuda_sm80 forward and FA2 (SDPA FLASH_ATTENTION) timed exactly as bench/compare.py times them
(compare.bench_ms = triton do_bench, warm-up 25 ms, 100 ms of repetitions, median; compare._flashattn_sm80 and
compare._sdpa on compare.py's tensors), without needing the cuda_sm90 backend in the build (compare.py lists
flashattn_sm80 only beside it). Helper sm80b, session 8 (issue 4): run once per Python extension built from a
table variant (bench/sm80b_tables.py), the processes in alternating order, so table variants compare the
compare.py way. Per row, four readings in the order ours, FA2, FA2, ours (the H200 is power-limited: a kernel
timed after another reads differently), each backend's mean and the ratio.

    PYTHONPATH=<dir holding the flashattn package> sm80b_peers.py LABEL ROWS
    ROWS: comma list of d:causal:seqlen, e.g. 128:0:512,128:0:1024,64:1:2048
"""
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms and the backends' calls)

from torch.nn.attention import SDPBackend  # noqa: E402

label = sys.argv[1]
rows = [tuple(int(x) for x in r.split(":")) for r in sys.argv[2].split(",")]
if compare.flashattn is None:
    sys.exit(f"flashattn not importable: {compare.FLASHATTN_IMPORT_ERROR}")
for hdim, causal, seqlen in rows:
    causal = bool(causal)
    batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
    torch.manual_seed(seqlen + hdim)
    q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
    impls = {"ours": compare._flashattn_sm80(q, k, v, causal),
             "fa2": compare._sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)}
    row = {"label": label, "hdim": hdim, "causal": causal, "seqlen": seqlen, "ours": [], "fa2": []}
    with torch.no_grad():
        row["max_diff_vs_fa2"] = round((impls["ours"]().float() - impls["fa2"]().transpose(1, 2).float())
                                       .abs().max().item(), 4)
        for name in ("ours", "fa2", "fa2", "ours"):
            fn = impls[name]
            fn()
            torch.cuda.synchronize()
            row[name].append(round(flop / compare.bench_ms(fn) / 1e9, 1))
    row["ours_mean"] = round(sum(row["ours"]) / 2, 1)
    row["fa2_mean"] = round(sum(row["fa2"]) / 2, 1)
    row["ratio"] = round(row["ours_mean"] / row["fa2_mean"], 4)
    print(json.dumps(row), flush=True)
    del q, k, v
    torch.cuda.empty_cache()
