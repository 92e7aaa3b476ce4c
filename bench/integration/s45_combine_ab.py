"""Session 45: split-KV's combine in one batched pass against the two-pass form (GPU; s45_final.sh).

Same process, two extensions: flashattn (this tree: the pieces' records read four at a time, one pass) and
flashattn_base (the tree before s45_combine.patch: a pass for the largest LSE, then one L2 round trip per piece).
KV-cache decodes (GQA 32/8, d128, bf16, cache_seqlens = the cache, the automatic split count), each graphed and
timed by events over 100 replays, the two builds alternating over three rounds; both checked against float32 SDPA.
A k_new / v_new append of one token rides along in every call (a decode step as a server runs it).
"""

import json
import statistics

import torch
import torch.nn.functional as F

import flashattn
import flashattn_base
from s44_append import graphed_us  # bench/integration/ (this script's directory)

SHAPES = [(1024, 1), (4096, 1), (4096, 2), (4096, 4), (4096, 8), (16384, 1), (16384, 2), (16384, 4), (65536, 1)]


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    for cache, batch in SHAPES:
        q = torch.randn(batch, 1, 32, 128, device="cuda", dtype=dt)
        k = torch.randn(batch, cache, 8, 128, device="cuda", dtype=dt)
        v = torch.randn_like(k)
        k_new = torch.randn(batch, 1, 8, 128, device="cuda", dtype=dt)
        v_new = torch.randn_like(k_new)
        seqlens = torch.full((batch,), cache - 1, device="cuda", dtype=torch.int32)
        k[:, cache - 1] = k_new[:, 0]
        v[:, cache - 1] = v_new[:, 0]
        ref = F.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float(),
                                             v.transpose(1, 2).float(), enable_gqa=True).transpose(1, 2)
        times = {"new": [], "base": []}
        errs = {}
        with torch.no_grad():
            for rnd in range(3):
                for name in (("new", "base") if rnd % 2 == 0 else ("base", "new")):
                    mod = flashattn if name == "new" else flashattn_base

                    def call(mod=mod):
                        return mod.flash_attn_with_kvcache(q, k, v, k_new, v_new, cache_seqlens=seqlens)
                    errs[name] = (call().float() - ref).abs().max().item()
                    times[name].append(graphed_us(call, replays=100))
        row = {"cache": cache, "batch": batch, **{f"{n}_us": round(statistics.median(t), 2) for n, t in times.items()},
               "ratio": round(statistics.median(times["new"]) / statistics.median(times["base"]), 4),
               **{f"{n}_err": round(e, 4) for n, e in errs.items()}}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
