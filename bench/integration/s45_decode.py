"""Session 45: split-KV decoding on cuda_sm90 (src/cuda/sm90/split_kv.h) at small batch, beside SDPA (GPU).

Each shape (GQA 32/8, d128, bf16, one query row, cache_seqlens = the cache) runs: the automatic choice (now
cuda_sm90 with split_kv_count's pieces); cuda_sm90 with num_splits 1 (session 44's kernel: no split); cuda_sm90
with explicit counts (is the chosen one the best?); cuda_sm80's automatic choice (session 44's route at batch
1-4); SDPA's FlashAttention 2 and cuDNN backends (enable_gqa); at 16384 keys also a paged cache (pages of 256,
shuffled). CUDA-graph replays timed by events (s44_append.graphed_us), TB/s of K/V read once. Every output is
compared with the float32 SDPA math. The first graph timed in a process read 6-12% slow in the first run
(s45_split_kv.sh: "auto" against "sm90 splits1" where both run one piece), so one untimed warm-up variant runs
first. "dense" is flash_attn_func on the same tensors (no per-sequence maps, no prepare kernel).
"""

import json

import torch

import flashattn
from s44_decode_splits import decode_problem, print_sdpa_rows, timed_row  # bench/integration/

ROWS = [(1024, b) for b in (1, 4, 8)] + [(4096, b) for b in (1, 2, 4, 8, 16, 64)] + \
       [(16384, b) for b in (1, 2, 4, 8, 16)] + [(65536, 1)]
EXPLICIT = (2, 4, 8, 16, 32)


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    hq, hk, d = 32, 8, 128
    for cache, batch in ROWS:
        q, k, v, seqlens, kv_bytes, (qt, kt, vt), ref = decode_problem(batch, cache, hq, hk, d, dt)
        variants = {"warmup": (None, 0), "auto": (None, 0), "dense": (None, 0), "sm90 splits1": ("cuda_sm90", 1),
                    "sm80 auto": ("cuda_sm80", 0)}
        if batch <= 8:
            for s in EXPLICIT:
                variants[f"sm90 splits{s}"] = ("cuda_sm90", s)
        page = 256
        paged = None
        if cache == 16384:
            blocks = batch * cache // page
            perm = torch.randperm(blocks, device="cuda")
            table = perm.view(batch, cache // page).to(torch.int32)
            kp = torch.empty(blocks, page, hk, d, device="cuda", dtype=dt)
            vp = torch.empty_like(kp)
            kp[perm] = k.reshape(blocks, page, hk, d)
            vp[perm] = v.reshape(blocks, page, hk, d)
            paged = (kp, vp, table)
            variants["auto paged256"] = (None, 0)
        with torch.no_grad():
            for name, (backend, splits) in variants.items():
                def call(backend=backend, splits=splits, name=name):
                    kk, vv, extra = k, v, {}
                    if name == "dense":
                        return flashattn.flash_attn_func(q, k, v)
                    if "paged" in name:
                        kk, vv, table = paged
                        extra = {"block_table": table}
                    if backend is None:
                        return flashattn.flash_attn_with_kvcache(q, kk, vv, cache_seqlens=seqlens, num_splits=splits,
                                                                 **extra)
                    with flashattn.use_backend(backend):
                        return flashattn.flash_attn_with_kvcache(q, kk, vv, cache_seqlens=seqlens, num_splits=splits,
                                                                 **extra)
                row = timed_row(call, ref, kv_bytes)
                if name != "warmup":
                    print(json.dumps({"cache": cache, "batch": batch, "impl": name, **row}), flush=True)
            print_sdpa_rows(cache, batch, qt, kt, vt, ref, kv_bytes)
        del k, v, paged


if __name__ == "__main__":
    main()
