#!/usr/bin/env python3
"""The cuda_sm80 forward of two table builds and FA2 (SDPA FLASH_ATTENTION) in one process, timed as
bench/compare.py times them (compare.bench_ms: 200 ms of the call's own launches, then triton do_bench 25 /
100 ms, median; compare.py's tensors and seeds). Helper sm80d, session 9 (issue 4).

Per row, ROUNDS rounds; round r times  a, b, c, fa2, a2  (r even) or the reverse (r odd), where a and a2 are
the same call of package flashattn (the control: identical code timed twice at two positions) and b / c the
calls of packages flashattn_b / flashattn_c (other builds of the extension from candidate tables, torch ops
renamed flashattnb:: / flashattnc::; a package whose build lacks the row's head dim is left out of that row).
Prints one JSON row per problem: every reading, the medians, b / a, c / a, a / fa2, b / fa2, c / fa2, and the
control's spread (a2 / a).

    PYTHONPATH=<dir with flashattn and flashattn_b> sm80d_peers.py ROUNDS ROWS [DEADLINE_EPOCH_S]
    ROWS: comma list of d:causal:seqlen, e.g. 256:0:512,64:1:1024
"""
import json
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms and the backends' calls)

from torch.nn.attention import SDPBackend  # noqa: E402

import importlib  # noqa: E402

import os  # noqa: E402

# SM80D_OTHERS: the tags of the other packages (flashattn_<tag>), default b,c.
TAGS = os.environ.get("SM80D_OTHERS", "b,c").split(",")
others = {}
for tag in TAGS:
    try:
        others[tag] = importlib.import_module(f"flashattn_{tag}")
    except ImportError:
        pass

rounds = int(sys.argv[1])
rows = [tuple(int(x) for x in r.split(":")) for r in sys.argv[2].split(",")]
deadline = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
if compare.flashattn is None:
    sys.exit(f"flashattn not importable: {compare.FLASHATTN_IMPORT_ERROR}")


def ours_other(module, q, k, v, causal):
    def run():
        with module.use_backend("cuda_sm80"):
            return module.flash_attn_func(q, k, v, causal=causal)
    return run


for hdim, causal, seqlen in rows:
    if time.time() > deadline:
        print(json.dumps({"skipped": [hdim, causal, seqlen], "reason": "deadline"}), flush=True)
        continue
    causal = bool(causal)
    batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
    torch.manual_seed(seqlen + hdim)
    q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn_like(q)
    v = torch.randn_like(q)
    flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
    impls = {"a": compare._flashattn_sm80(q, k, v, causal),
             "fa2": compare._sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)}
    row = {"hdim": hdim, "causal": causal, "seqlen": seqlen}
    for tag, module in others.items():
        fn = ours_other(module, q, k, v, causal)
        try:
            with torch.no_grad():
                fn()
            impls[tag] = fn
        except Exception as error:  # e.g. a build without this head-dim bucket
            row[f"{tag}_error"] = str(error)[:200]
    impls["a2"] = impls["a"]
    order = [n for n in ["a", *TAGS, "fa2", "a2"] if n in impls]
    with torch.no_grad():
        ref = impls["fa2"]().transpose(1, 2).float()
        for name in ["a", *TAGS]:
            if name in impls:
                row[f"max_diff_{name}_vs_fa2"] = round((impls[name]().float() - ref).abs().max().item(), 4)
        del ref
        readings = {n: [] for n in order}
        for r in range(rounds):
            for name in (order if r % 2 == 0 else order[::-1]):
                fn = impls[name]
                fn()
                torch.cuda.synchronize()
                readings[name].append(round(flop / compare.bench_ms(fn) / 1e9, 1))
    row["readings"] = readings
    med = {n: statistics.median(v) for n, v in readings.items()}
    row["median"] = {n: round(v, 1) for n, v in med.items()}
    a = (med["a"] + med["a2"]) / 2
    row["a_over_fa2"] = round(a / med["fa2"], 4)
    row["control_a2_over_a"] = round(med["a2"] / med["a"], 4)
    for tag in TAGS:
        if tag in med:
            row[f"{tag}_over_a"] = round(med[tag] / a, 4)
            row[f"{tag}_over_fa2"] = round(med[tag] / med["fa2"], 4)
    print(json.dumps(row), flush=True)
    del q, k, v, impls
    torch.cuda.empty_cache()
