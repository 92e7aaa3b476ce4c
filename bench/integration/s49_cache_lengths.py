"""Session 49: a KV cache's lengths read by the decode kernels themselves (forward_config.h CACHE_LENGTHS,
kernel_params.h CacheLengths), builds side by side in one process (GPU).

KV-cache decode steps (one query per sequence, bf16, graphed, the builds interleaved over three rounds, medians:
s46_decode_ab.py's protocol) over caches with room past every sequence (capacity = length + 256) whose rows past
the lengths hold NaN, so a kernel that reads them into its sums shows in max_err (every output checked against
the float32 SDPA math over the sequence's keys). Layouts: dense (the narrow tile zeroes V's rows past the end),
paged (pages of 64 and 16, a random page order), and dense with one appended token per step (the prepare kernel
still runs, to append). Lengths that are not multiples of the key block (the tail zeroed). SDPA's FlashAttention 2
and cuDNN beside the dense rows at 1000 keys (the rows where cuDNN was faster: performance.md, session 48).

    python3 bench/integration/s49_cache_lengths.py base new
"""

import torch
import torch.nn.functional as F

from s44_decode_splits import print_sdpa_rows  # bench/integration/
from s46_decode_ab import builds_from_argv, interleaved_medians, print_medians  # bench/integration/

# label, d, q heads, kv heads, layout (dense / paged64 / paged16 / append), keys per sequence, batch
ROWS = []
for length, batch in ((1000, 1), (1000, 4), (1000, 8), (3999, 1), (3999, 8), (16100, 1)):
    ROWS.append((128, 32, 8, "dense", length, batch))
ROWS += [(64, 32, 8, "dense", 1000, b) for b in (1, 4)]
ROWS += [(256, 16, 8, "dense", n, 1) for n in (1000, 3999)]
ROWS += [(128, 64, 8, "dense", 1000, 1), (128, 32, 32, "dense", 1000, 1), (128, 32, 8, "dense", 3999, 64)]
ROWS += [(128, 32, 8, "paged64", n, b) for n, b in ((1000, 1), (1000, 8), (16100, 1))]
ROWS += [(128, 32, 8, "paged16", 1000, 1)]
ROWS += [(128, 32, 8, "append", 1000, b) for b in (1, 8)]
# The gather of a paged tail block (s49_cache2.sh): lengths on the key-block grid against off it, on the narrow
# tile (now TMA, producer.h kTailBoxes) and on the 64-row tile (a GQA group of 16: still gathered).
ROWS += [(128, 32, 8, "paged64", 1024, 1), (128, 64, 4, "paged64", 1000, 1), (128, 64, 4, "paged64", 1024, 1)]
ROWS += [(128, 64, 4, "dense", 1000, 1), (128, 64, 4, "paged16", 1000, 1), (128, 64, 4, "paged64", 1000, 8)]

ROOM = 256


def decode_case(d, hq, hk, layout, length, batch, dt):
    """The call's tensors (a dict of keyword arguments besides q, k_cache, v_cache), the float32 reference, the
    bytes of K/V read once, and SDPA's (b, h, s, d) views of the sequence's keys."""
    capacity = length + ROOM
    q = torch.randn(batch, 1, hq, d, device="cuda", dtype=dt)
    k = torch.randn(batch, capacity, hk, d, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    k[:, length:] = float("nan")
    v[:, length:] = float("nan")
    seqlens = torch.full((batch,), length, device="cuda", dtype=torch.int32)
    extra = {}
    if layout == "append":
        knew, vnew = k[:, length - 1:length].clone(), v[:, length - 1:length].clone()
        k[:, length - 1] = float("nan")
        v[:, length - 1] = float("nan")
        extra = {"k": knew, "v": vnew, "cache_seqlens": seqlens - 1}
        kc, vc = k, v
        keys, values = torch.cat([k[:, :length - 1], knew], 1), torch.cat([v[:, :length - 1], vnew], 1)
    elif layout.startswith("paged"):
        page = int(layout[5:])
        pages = capacity // page + 1
        blocks = batch * pages
        padded = pages * page
        kd = torch.full((batch, padded, hk, d), float("nan"), device="cuda", dtype=dt)
        vd = torch.full_like(kd, float("nan"))
        kd[:, :capacity], vd[:, :capacity] = k, v
        perm = torch.randperm(blocks, device="cuda")
        kc = torch.empty(blocks, page, hk, d, device="cuda", dtype=dt)
        vc = torch.empty_like(kc)
        kc[perm] = kd.reshape(blocks, page, hk, d)
        vc[perm] = vd.reshape(blocks, page, hk, d)
        extra = {"cache_seqlens": seqlens, "block_table": perm.reshape(batch, pages).to(torch.int32)}
        keys, values = k[:, :length], v[:, :length]
    else:
        kc, vc = k, v
        extra = {"cache_seqlens": seqlens}
        keys, values = k[:, :length], v[:, :length]
    qt, kt, vt = q.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
    ref = F.scaled_dot_product_attention(qt.float(), kt.float(), vt.float(), enable_gqa=True).transpose(1, 2)
    kv_bytes = 2 * keys.numel() * keys.element_size()
    return q, kc, vc, extra, ref, kv_bytes, (qt, kt, vt)


def main():
    names, builds = builds_from_argv()
    summary = []
    for d, hq, hk, layout, length, batch in ROWS:
        q, kc, vc, extra, ref, kv_bytes, views = decode_case(d, hq, hk, layout, length, batch, torch.bfloat16)

        def call(fa):
            return fa.flash_attn_with_kvcache(q, kc, vc, **extra)

        tags = {"d": d, "heads": f"{hq}/{hk}", "layout": layout, "keys": length, "batch": batch}
        with torch.no_grad():
            med = interleaved_medians(builds, call, ref, kv_bytes, tags)
            summary.append((f"{layout} d{d} {hq}/{hk} {length} b{batch}", med))
            if layout == "dense" and length == 1000 and hk == 8:
                print_sdpa_rows(f"d{d}/{length}", batch, *(x.contiguous() for x in views), ref, kv_bytes)
        del kc, vc
    print_medians(summary, names, "layout d heads keys batch")


if __name__ == "__main__":
    main()
