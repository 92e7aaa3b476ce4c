"""Session 46: is the split count fitted at d128 (split_kv_plan.h) right for the d64 / d256 decode kernels? (GPU)

KV-cache decode steps (d256 16 / 8 heads, d64 32 / 8, bf16, dense cache, graphed) with the automatic count and with
num_splits 2 / 4 / 8 / 16 / 32, one process, an untimed warm-up first; a JSON line per variant, then per row the
automatic time over the best explicit one.

    python3 bench/integration/s46_dims_rule.py

FLASHATTN_DIMS_ROWS=narrow (session 47): the narrow decode tile's rows (d128 / d64 at 32 / 8 heads, d96 MHA), and
num_splits 1 too. FLASHATTN_DIMS_ROWS=narrow256 (session 48): d256 16 / 8 heads on the narrow tile, likewise;
narrow256tiles (s48_trace.sh): d256 narrow rows of 1, 4, 8 and 16 tiles (MQA 8 / 1, 32 / 4, 16 / 8 at batch 1 and
2) over 4096 and 16384 keys, counts to 64; narrowall (s48_rule.sh): narrow's rows, d128 64 / 8 at batch 1 (8 rows a
tile) and d128 / d64 MQA at 16384 keys, counts to 64.
"""

import json
import os

import torch

import flashattn
from s44_decode_splits import decode_problem, timed_row  # bench/integration/

SET = os.environ.get("FLASHATTN_DIMS_ROWS", "")
NARROW = SET in ("narrow", "narrowall", "narrow256", "narrow256tiles")
HEADS = {"narrow": ((128, 32, 8), (64, 32, 8), (96, 32, 32)), "narrowall": ((128, 32, 8), (64, 32, 8), (96, 32, 32)),
         "narrow256": ((256, 16, 8),)}.get(
    SET, ((256, 16, 8), (64, 32, 8)))
ROWS = [(d, hq, hk, cache, b) for d, hq, hk in HEADS for cache in (1024, 4096, 16384) for b in (1, 4)]
COUNTS = (0, 1, 2, 4, 8, 16, 32) if NARROW else (0, 2, 4, 8, 16, 32)
if SET == "narrowall":  # session 48, s48_rule.sh: the narrow rows, and 8-row tiles of 1 and 8 tiles at d128 / d64
    ROWS += [(128, 64, 8, cache, 1) for cache in (4096, 16384)] + [(d, 8, 1, 16384, 1) for d in (128, 64)]
    COUNTS = (0, 1, 2, 4, 8, 16, 32, 64)
if SET == "narrow256tiles":
    ROWS = [(256, hq, hk, cache, b) for hq, hk, b in ((8, 1, 1), (32, 4, 1), (16, 8, 1), (16, 8, 2))
            for cache in (4096, 16384)]
    COUNTS = (0, 2, 4, 8, 16, 32, 64)


def main():
    torch.manual_seed(0)
    summary = []
    for d, hq, hk, cache, batch in ROWS:
        q, k, v, seqlens, kv_bytes, _, ref = decode_problem(batch, cache, hq, hk, d, torch.bfloat16)
        times = {}
        with torch.no_grad():
            timed_row(lambda: flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens), ref, kv_bytes)
            for splits in COUNTS:
                row = timed_row(lambda s=splits: flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens,
                                                                                    num_splits=s), ref, kv_bytes)
                print(json.dumps({"d": d, "cache": cache, "batch": batch, "splits": splits, **row}), flush=True)
                if "us" in row:
                    times[splits] = row["us"]
        best = min((t, s) for s, t in times.items() if s != 0)
        summary.append((d, cache, batch, times.get(0), best))
        del k, v
    print("# auto / best explicit count: d cache batch auto best(count)")
    for d, cache, batch, auto, (t, s) in summary:
        print(f"# d{d} {cache} b{batch}: {auto} / {t} ({s}) = {auto / t:.3f}")


if __name__ == "__main__":
    main()
