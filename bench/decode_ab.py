# Same-process A/B of several builds of the flashattn Python package on KV-cache decoding (session 19:
# the one-consumer 64-row kernel, forward_config.h use_single_consumer), beside SDPA's cuDNN backend where
# it can run the shape (dense caches of full length). Measurement as bench/sm90r_ab.py: each row's columns
# timed on the same inputs with triton.testing.do_bench (median), each after --settle-ms of its own calls,
# the column order rotated from row to row and then reversed, the mean of the two. The caches are ~2 GB,
# far past L2, so every call reads them from DRAM. Rate: bytes of K and V the call must read (each
# sequence's cached keys once per kv head) over the time, TB/s; ratios between builds are best taken
# from the times (NAME_us).
#   PYTHONPATH=<dir with the packages> python3 bench/decode_ab.py --builds base,new,ctrl
# Build NAME is imported as package flashattn_NAME ("new": flashattn), bench/sm90_device_common.sh
# sm90_build_py; "ctrl" is base's extension installed twice (its ratio to base is the noise floor).
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from sm90r_ab import import_builds, time_rotated

# (name, batch, q length, q heads, kv heads, cached keys, page size (0: dense), causal)
SHAPES = [
    ("gqa_b64_8k", 64, 1, 32, 8, 8192, 0, False),  # bench/compare.py's decode row
    ("gqa_b16_32k", 16, 1, 32, 8, 32768, 0, False),
    ("gqa_b64_8k_page256", 64, 1, 32, 8, 8192, 256, False),
    ("gqa_b64_8k_q4_causal", 64, 4, 32, 8, 8192, 0, True),  # speculative decoding: 16 packed rows
    ("mha_b16_4k", 16, 1, 32, 32, 4096, 0, False),
]
# Chunked prefill over a paged cache (the two-consumer kernel's paged instance, not the decode kernel): run only
# when named in --shapes. The rate is still K/V bytes over time; the ratios between builds are what they are for.
PREFILL_SHAPES = [
    ("prefill_b4_4k_page256", 4, 4096, 16, 16, 4096, 256, False),
    ("prefill_b4_4k_page256_causal", 4, 4096, 16, 16, 4096, 256, True),
    ("prefill_gqa_b2_8k_page64_causal", 2, 8192, 32, 8, 8192, 64, True),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default="base,ctrl")
    ap.add_argument("--shapes", default=",".join(s[0] for s in SHAPES))
    ap.add_argument("--rep", type=int, default=100)
    ap.add_argument("--settle-ms", type=float, default=200)
    args = ap.parse_args()
    impls = import_builds(args.builds, "flash_attn_with_kvcache")
    dev = torch.cuda.get_device_properties(0)
    print(json.dumps({"device": dev.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "builds": list(impls), "settle_ms": args.settle_ms}), flush=True)
    wanted = set(args.shapes.split(","))
    row_index = 0
    with torch.no_grad():
        for name, b, sq, hq, hk, sk, page, causal in SHAPES + PREFILL_SHAPES:
            if name not in wanted:
                continue
            torch.manual_seed(row_index + 19)
            d = 128
            q = torch.randn(b, sq, hq, d, device="cuda", dtype=torch.bfloat16)
            k_dense = torch.randn(b, sk, hk, d, device="cuda", dtype=torch.bfloat16)
            v_dense = torch.randn_like(k_dense)
            seqlens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
            if page:
                # The pages of each sequence in a shuffled order: a block table that is not the identity.
                pages_per_seq = sk // page
                perm = torch.randperm(b * pages_per_seq, device="cuda")
                table = perm.view(b, pages_per_seq).to(torch.int32)
                k_cache = torch.empty(b * pages_per_seq, page, hk, d, device="cuda", dtype=torch.bfloat16)
                v_cache = torch.empty_like(k_cache)
                k_cache[perm] = k_dense.view(b * pages_per_seq, page, hk, d)
                v_cache[perm] = v_dense.view(b * pages_per_seq, page, hk, d)
            else:
                table, k_cache, v_cache = None, k_dense, v_dense
            kv_bytes = 2 * k_dense.numel() * k_dense.element_size()
            fns = {n: (lambda f=f: f(q, k_cache, v_cache, cache_seqlens=seqlens, block_table=table, causal=causal))
                   for n, f in impls.items()}

            qt, kt, vt = q.transpose(1, 2), k_dense.transpose(1, 2), v_dense.transpose(1, 2)

            def cudnn():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    # SDPA's is_causal is top-left aligned, the same mask as bottom-right only when sq == sk.
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=hk != hq)

            row = {"shape": name, "batch": b, "sq": sq, "heads": hq, "heads_kv": hk, "keys": sk, "page": page,
                   "causal": causal, "kv_gbytes": round(kv_bytes / 1e9, 3)}
            if causal and sq != sk:
                # Bottom-right causal for sq < sk: an explicit mask would leave the cuDNN backend, so the
                # shape's reference is the build's own first column instead (no cuDNN timing).
                ref = next(iter(fns.values()))().float()
            else:
                fns["cudnn"] = cudnn
                ref = cudnn().transpose(1, 2).float()
            row["err"] = {n: float((fn().float() - ref).abs().max()) for n, fn in fns.items() if n != "cudnn"}
            ms = time_rotated(fns, row_index, args.settle_ms, args.rep, warmup=25)
            row_index += 1
            for n in fns:
                # Four significant figures: a prefill shape's rate is a few hundredths of a TB/s.
                row[n] = float(f"{kv_bytes / ms[n] / 1e9:.4g}")
                row[n + "_us"] = round(ms[n] * 1e3, 1)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
