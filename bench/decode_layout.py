# Diagnostic (session 19): does the KV cache's layout move the decode's DRAM efficiency? ncu on an H200 read our
# decode kernel at 81.9% of the DRAM peak against cuDNN's 95.4% (b16, 32 / 8 heads, 32k keys; 545.7 against 468.5
# us). In the usual (batch, seq, kv heads, d) cache one head's K row is 256 bytes at a 2 KB stride, and our
# producer loads it as two 128-byte column chunks (two TMA boxes) at different times; in a (batch, kv heads, seq,
# d) cache a head's key block is one contiguous 32 KB run. Same inputs, both layouts, ours and cuDNN, TB/s of K/V
# read, bench/sm90r_ab.py's timing (time_rotated).
#   PYTHONPATH=<dir with flashattn> python3 bench/decode_layout.py
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from sm90r_ab import import_builds, time_rotated


def main():
    ours = import_builds("new", "flash_attn_with_kvcache")["new"]
    print(json.dumps({"device": torch.cuda.get_device_properties(0).name}), flush=True)
    row_index = 0
    with torch.no_grad():
        for b, sk in ((16, 32768), (64, 8192)):
            hq, hk, d = 32, 8, 128
            torch.manual_seed(b)
            q = torch.randn(b, 1, hq, d, device="cuda", dtype=torch.bfloat16)
            seq_major = [torch.randn(b, sk, hk, d, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
            heads_major = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in seq_major]  # same values
            seqlens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
            kv_bytes = 2 * seq_major[0].numel() * 2
            fns = {}
            for name, (k, v) in (("seq_major", seq_major), ("heads_major", heads_major)):
                fns["ours_" + name] = lambda k=k, v=v: ours(q, k, v, cache_seqlens=seqlens)

                def cudnn(k=k, v=v):
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                              enable_gqa=True)
                fns["cudnn_" + name] = cudnn
            ref = fns["cudnn_seq_major"]().transpose(1, 2).float()
            row = {"batch": b, "keys": sk,
                   "err": {n: float((fn().float() - ref).abs().max()) for n, fn in fns.items() if n.startswith("ours")}}
            ms = time_rotated(fns, row_index, 200, 60, warmup=25)
            row_index += 1
            row.update({n: round(kv_bytes / t / 1e9, 3) for n, t in ms.items()})
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
