"""Session 44: decoding at small batch over long caches, by backend and split count (GPU).

s44_append.py read batch-8 decodes over 8192 cached keys (GQA 32/8, d128) at 0.73 TB/s against 4.5 at batch 64:
with 8 x 8 packed query tiles cuda_sm90 leaves the problem to cuda_sm80 (few_tiles_long_cache), whose split
heuristic counts 8 x 32 unpacked head tiles as enough for the GPU (resolve_splits) and runs one split. Here each
shape runs: the automatic choice; cuda_sm80 with num_splits 1..32; cuda_sm90 with num_splits=1 (no split, packed
GQA); SDPA's FlashAttention 2 and cuDNN backends (enable_gqa). CUDA-graph replays timed by events (what a serving
engine runs), TB/s of K/V read (the cache once). Outputs are compared with the float32 SDPA math on each shape.
"""

import json
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashattn
from s44_append import graphed_us  # bench/integration/ (this script's directory)


# s44_decode_splits.sh ran (4096, 16384) with splits 1..32 before cuda_sm80's groups-as-rows view;
# s44_decode_rows.sh runs these after it.
# final44b.sh: FLASHATTN_DECODE_QUICK=1, the rows the routing change moves.
CACHES = (4096, 16384) if os.environ.get("FLASHATTN_DECODE_QUICK") else (1024, 4096, 16384)
SM80_SPLITS = () if os.environ.get("FLASHATTN_DECODE_QUICK") else (1, 4, 16)


def decode_problem(batch, cache, hq, hk, d, dt):
    """One decode step's tensors over a full cache: q (b, 1, hq, d), k and v (b, cache, hk, d), cache_seqlens, the
    bytes of K/V, the (b, h, s, d) views SDPA takes, and the float32 SDPA result in q's layout."""
    q = torch.randn(batch, 1, hq, d, device="cuda", dtype=dt)
    k = torch.randn(batch, cache, hk, d, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    seqlens = torch.full((batch,), cache, device="cuda", dtype=torch.int32)
    kv_bytes = 2 * k.numel() * k.element_size()
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    ref = F.scaled_dot_product_attention(qt.float(), kt.float(), vt.float(), enable_gqa=True).transpose(1, 2)
    return q, k, v, seqlens, kv_bytes, (qt, kt, vt), ref


def timed_row(fn, ref, kv_bytes, transpose=False):
    """One variant's row: its max |error| against ref and its graphed time (TB/s of K/V read once), or the error
    that stopped it (a variant a backend refuses is a row, not a stop). transpose: fn returns (b, h, s, d)."""
    try:
        out = fn()
        err = ((out.transpose(1, 2) if transpose else out).float() - ref).abs().max().item()
        us = graphed_us(fn, replays=100)
        return {"us": round(us, 2), "TB/s": round(kv_bytes / us / 1e6, 3), "max_err": round(err, 4)}
    except Exception as e:  # noqa: BLE001
        return {"error": str(e).splitlines()[0][:120]}


def print_sdpa_rows(cache, batch, qt, kt, vt, ref, kv_bytes):
    """SDPA's FlashAttention 2 and cuDNN backends (enable_gqa) on the same (b, h, s, d) tensors, one row each."""
    for name, backend in (("sdpa FA2", SDPBackend.FLASH_ATTENTION), ("sdpa cuDNN", SDPBackend.CUDNN_ATTENTION)):
        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        row = timed_row(sdpa, ref, kv_bytes, transpose=True)
        print(json.dumps({"cache": cache, "batch": batch, "impl": name, **row}), flush=True)


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    hq, hk, d = 32, 8, 128
    for cache in CACHES:
        for batch in ((4, 8) if os.environ.get("FLASHATTN_DECODE_QUICK") else (1, 4, 8, 16)):
            q, k, v, seqlens, kv_bytes, (qt, kt, vt), ref = decode_problem(batch, cache, hq, hk, d, dt)
            variants = {"sm90 splits1": ("cuda_sm90", 1), "sm80 auto": ("cuda_sm80", 0)}
            for s in SM80_SPLITS:
                variants[f"sm80 splits{s}"] = ("cuda_sm80", s)
            variants["auto"] = (None, 0)
            with torch.no_grad():
                for name, (backend, splits) in variants.items():
                    def call(backend=backend, splits=splits):
                        if backend is None:
                            return flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens, num_splits=splits)
                        with flashattn.use_backend(backend):
                            return flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens,
                                                                     num_splits=splits)
                    row = timed_row(call, ref, kv_bytes)
                    print(json.dumps({"cache": cache, "batch": batch, "impl": name, **row}), flush=True)
                print_sdpa_rows(cache, batch, qt, kt, vt, ref, kv_bytes)
            del k, v


if __name__ == "__main__":
    main()
