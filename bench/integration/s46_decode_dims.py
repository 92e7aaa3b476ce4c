"""Session 46: the d = dv = 64 and 256 decode kernels (forward_config.h SINGLE_CONSUMER_OTHER_DIMS), builds side by
side in one process (GPU).

As s46_decode_ab.py (graphed decode steps, the builds interleaved over three rounds, medians, every output
checked against the float32 SDPA math, SDPA's FlashAttention 2 and cuDNN once per row), over rows of d64 and d256
KV-cache decodes (GQA as the models that use them: d256 16 / 8 heads as Gemma-2 9B, d64 32 / 8), batch 1-8 over
1024-16384 keys (split-KV: few tiles) and batch 64 (no split: the one-consumer kernel against the old tiles), and
short-query forwards (flash_attn_func, 16 queries of a group of 4: 64 packed rows) at batch 16. "base" is the tree
with SINGLE_CONSUMER_OTHER_DIMS=0 (d64 / d256 decodes of few tiles then run on cuda_sm80's splits).
FLASHATTN_DIMS_ROWS=narrow (session 47, s47_narrow.sh): the rows of the narrow decode tile (at most 8 packed rows:
d128 and d64 at 32 / 8 heads, d96 MHA, d128 at 64 / 8: 8 rows; short-query forwards of 2 queries of a group of 4);
FLASHATTN_DIMS_ROWS=narrow64 its d64 rows alone. FLASHATTN_DIMS_ROWS=narrow256 (session 48, s48_narrow256.sh): d256 on
the narrow tile (16 / 8 heads as Gemma-2 9B: 2 rows; 32 / 4: 8 rows; short-query forwards of 2 queries).

    python3 bench/integration/s46_decode_dims.py base new
"""

import os
import sys

import torch
import torch.nn.functional as F

from s44_decode_splits import decode_problem, print_sdpa_rows, timed_row  # bench/integration/
from s46_decode_ab import interleaved_medians, package, print_medians  # bench/integration/

# FLASHATTN_DIMS_ROWS=96 (s46_d96.sh): d96 MHA decodes (32 heads, as Phi-3-mini) on the d128 kernels instead.
# A row: kind, d, q heads, kv heads, cache, batch, queries of a forward row.
ROWS = []
SET = os.environ.get("FLASHATTN_DIMS_ROWS", "")
if SET in ("narrow", "narrow64"):  # narrow64 (s47_stages.sh): the d64 rows alone
    for d, hq, hk in ((64, 32, 8),) if SET == "narrow64" else ((128, 32, 8), (64, 32, 8)):
        ROWS += [("decode", d, hq, hk, cache, b, 1) for cache in (1024, 4096, 16384) for b in (1, 4, 8)]
        ROWS += [("decode", d, hq, hk, 4096, 64, 1), ("forward", d, hq, hk, 2048, 16, 2)]
    for d, hq, hk in ((96, 32, 32), (128, 64, 8)) if SET == "narrow" else ():
        ROWS += [("decode", d, hq, hk, cache, b, 1) for cache in (1024, 16384) for b in (1, 4)]
elif SET == "narrow256":
    ROWS += [("decode", 256, 16, 8, cache, b, 1) for cache in (1024, 4096, 16384) for b in (1, 4, 8)]
    ROWS += [("decode", 256, 16, 8, 4096, 64, 1), ("forward", 256, 16, 8, 2048, 16, 2)]
    ROWS += [("decode", 256, 32, 4, cache, b, 1) for cache in (1024, 16384) for b in (1, 4)]
else:
    for d, hq, hk in ((96, 32, 32),) if SET == "96" else ((256, 16, 8), (64, 32, 8)):
        ROWS += [("decode", d, hq, hk, cache, b, 1) for cache in (1024, 4096, 16384) for b in (1, 2, 4, 8)]
        ROWS += [("decode", d, hq, hk, 4096, 64, 1), ("forward", d, hq, hk, 2048, 16, 16)]


def main():
    names = sys.argv[1:]
    builds = {n: package(n) for n in names}
    torch.manual_seed(0)
    dt = torch.bfloat16
    summary = []
    for kind, d, hq, hk, cache, batch, queries in ROWS:
        q, k, v, seqlens, kv_bytes, (qt, kt, vt), ref = decode_problem(batch, cache, hq, hk, d, dt)
        if kind == "forward":
            q = torch.randn(batch, queries, hq, d, device="cuda", dtype=dt)
            qt = q.transpose(1, 2)
            ref = F.scaled_dot_product_attention(qt.float(), kt.float(), vt.float(), enable_gqa=True).transpose(1, 2)

        def call(fa):
            if kind == "forward":
                return fa.flash_attn_func(q, k, v)
            return fa.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens)

        with torch.no_grad():
            timed_row(lambda: call(builds[names[0]]), ref, kv_bytes)  # untimed warm-up
            med = interleaved_medians(builds, call, ref, kv_bytes, {"kind": kind, "d": d, "cache": cache,
                                                                    "batch": batch})
            summary.append((f"{kind} d{d} {hq}/{hk} {cache} b{batch}", med))
            if kind == "decode":
                print_sdpa_rows(f"d{d}/{cache}", batch, qt, kt, vt, ref, kv_bytes)
        del k, v
    print_medians(summary, names, "kind d cache batch")


if __name__ == "__main__":
    main()
