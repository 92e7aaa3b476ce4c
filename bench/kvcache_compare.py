"""KV-cache forward on one GPU: flashattn's cuda_sm90 and cuda_sm80 backends beside
PyTorch SDPA (FLASH_ATTENTION = FA2, CUDNN_ATTENTION), in one process.

Cases (bf16, GQA 32/8, d 128, 8192 cached keys unless said):
  decode        q length 1, batch 64, cache_seqlens (bench/compare.py's decode row)
  decode_b1/4/8 the same at batch 1, 4 and 8 (few query tiles: the split-KV choice decides)
  decode_p256   the same over a paged cache, 256-row pages, shuffled block table
  decode_p16    the same with 16-row pages
  prefill       8 sequences append 512 new tokens each (k/v written into the cache in place,
                causal, bottom-right aligned) and attend over 8192 keys
Each decode row also runs the library's automatic choice ("auto") and checks it against SDPA's fp32 math.
Metric: TB/s of K/V read (decode: the whole cache once; prefill: K/V of the cache once)
and microseconds, median of triton.testing.do_bench. SDPA has no KV-cache entry point:
its decode rows attend q over the same dense K/V (the same bytes); its prefill row is
non-causal (SDPA's is_causal is top-left aligned for sq != sk), so it does more work.

    python bench/kvcache_compare.py
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

import flashattn


def median_us(fn):
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3


def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    hq, hk, d, sk = 32, 8, 128, 8192
    rows = []

    def record(case, name, fn, kv_bytes):
        try:
            us = median_us(fn)
            rows.append({"case": case, "impl": name, "us": round(us, 1), "TB/s": round(kv_bytes / us / 1e6, 3)})
        except Exception as e:  # a backend that declines the case says why
            rows.append({"case": case, "impl": name, "error": str(e).splitlines()[0][:160]})
        print(json.dumps(rows[-1]), flush=True)

    backends = [b for b in ("cuda_sm90", "cuda_sm80") if flashattn.backend_compiled(b)]

    def decode(case, b):
        """One dense-cache decode row: the automatic choice, each backend, SDPA's FA2 and cuDNN."""
        q = torch.randn(b, 1, hq, d, device="cuda", dtype=dt)
        k_cache = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
        v_cache = torch.randn_like(k_cache)
        seqlens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        kv_bytes = 2 * k_cache.numel() * k_cache.element_size()
        for be in ["auto"] + backends:
            def run(be=be):
                with flashattn.use_backend(be):
                    return flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens)
            record(case, be, run, kv_bytes)
        # Correctness of the automatic choice against SDPA's math backend in fp32.
        out = flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=seqlens)
        ref = F.scaled_dot_product_attention(q.transpose(1, 2).float(), k_cache.transpose(1, 2).float(),
                                             v_cache.transpose(1, 2).float(), enable_gqa=True).transpose(1, 2)
        print(json.dumps({"check": case, "backend": "auto", "max_abs_err": (out.float() - ref).abs().max().item()}))
        qt, kt, vt = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)
        for name, sb in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
            def run(sb=sb):
                with sdpa_kernel([sb]):
                    return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
            record(case, name, run, kv_bytes)
        return q, k_cache, v_cache, seqlens, out, kv_bytes

    # Small batches (session 44): few tiles, where the split-KV choice decides.
    for small in (1, 4, 8):
        decode(f"decode_b{small}", small)
    # Decode, dense cache, batch 64 (the paged rows below read the same keys).
    b = 64
    q, k_cache, v_cache, seqlens, out, kv_bytes = decode("decode", b)

    # Decode, paged caches (the same keys, pages shuffled).
    for page in (256, 16):
        pages_per_seq = sk // page
        perm = torch.randperm(b * pages_per_seq, device="cuda")
        table = perm.view(b, pages_per_seq).to(torch.int32)
        kp = torch.empty(b * pages_per_seq, page, hk, d, device="cuda", dtype=dt)
        vp = torch.empty_like(kp)
        kp[perm] = k_cache.view(b * pages_per_seq, page, hk, d)
        vp[perm] = v_cache.view(b * pages_per_seq, page, hk, d)
        for be in backends:
            def run(be=be, kp=kp, vp=vp, table=table):
                with flashattn.use_backend(be):
                    return flashattn.flash_attn_with_kvcache(q, kp, vp, cache_seqlens=seqlens, block_table=table)
            record(f"decode_p{page}", be, run, kv_bytes)
        for be in backends:
            try:
                with flashattn.use_backend(be):
                    outp = flashattn.flash_attn_with_kvcache(q, kp, vp, cache_seqlens=seqlens, block_table=table)
                err = (outp.float() - out.float()).abs().max().item()
                print(json.dumps({"check": f"decode_p{page}", "backend": be, "max_abs_err_vs_dense": err}))
            except Exception as e:
                print(json.dumps({"check": f"decode_p{page}", "backend": be, "declined": str(e).splitlines()[0][:160]}))
        del kp, vp
    del k_cache, v_cache

    # Prefill with a cache: 8 sequences x 512 new tokens appended after 7680 cached ones.
    b, s_new = 8, 512
    q = torch.randn(b, s_new, hq, d, device="cuda", dtype=dt)
    k_new = torch.randn(b, s_new, hk, d, device="cuda", dtype=dt)
    v_new = torch.randn_like(k_new)
    k_cache = torch.randn(b, sk, hk, d, device="cuda", dtype=dt)
    v_cache = torch.randn_like(k_cache)
    seqlens = torch.full((b,), sk - s_new, dtype=torch.int32, device="cuda")
    kv_bytes = 2 * k_cache.numel() * k_cache.element_size()
    for be in backends:
        def run(be=be):
            with flashattn.use_backend(be):
                return flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, k=k_new, v=v_new, cache_seqlens=seqlens,
                                                         causal=True)
        record("prefill", be, run, kv_bytes)
    qt, kt, vt = q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2)
    for name, sb in (("sdpa_flash (non-causal)", SDPBackend.FLASH_ATTENTION),
                     ("sdpa_cudnn (non-causal)", SDPBackend.CUDNN_ATTENTION)):
        def run(sb=sb):
            with sdpa_kernel([sb]):
                return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
        record("prefill", name, run, kv_bytes)

    print(f"# {torch.cuda.get_device_name()} | torch {torch.__version__}")
    print("| case | impl | us | TB/s of K/V |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['impl']} | {r.get('us', '')} | {r.get('TB/s', r.get('error', ''))} |")


if __name__ == "__main__":
    sys.exit(main())
