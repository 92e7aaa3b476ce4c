"""Session 55: the last round's split (SPLIT_KV_TAIL) on a KV cache whose sequences differ in length (each drawn
uniformly from half the capacity's keys to all of them, a fixed seed), against the same tree built with the
switch off: the rule sees only the longest sequence's blocks, and the dynamic schedule balances the rest.
GQA 32/8 d128, graphed decode steps, the builds interleaved over three rounds (s46_decode_ab.py), every
output checked against the float32 SDPA math per sequence.

    python3 bench/integration/s55_ragged.py base new
"""

import torch
import torch.nn.functional as F

from s46_decode_ab import builds_from_argv, interleaved_medians, print_medians  # bench/integration/

# keys of the longest sequence, batch
ROWS = [(n, b) for n in (4096, 16384) for b in (17, 20, 24, 34, 40)] + [(1024, 17), (1024, 20)]


def ragged_case(longest, batch, hq=32, hk=8, d=128, dt=torch.bfloat16):
    g = torch.Generator(device="cpu").manual_seed(longest * 100 + batch)
    lengths = torch.randint(longest // 2, longest + 1, (batch,), generator=g)
    q = torch.randn(batch, 1, hq, d, device="cuda", dtype=dt)
    k = torch.randn(batch, longest, hk, d, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    ref = torch.empty(batch, 1, hq, d, device="cuda", dtype=torch.float32)
    for b, n in enumerate(lengths.tolist()):
        k[b, n:] = float("nan")
        v[b, n:] = float("nan")
        ref[b] = F.scaled_dot_product_attention(
            q[b:b + 1].transpose(1, 2).float(), k[b:b + 1, :n].transpose(1, 2).float(),
            v[b:b + 1, :n].transpose(1, 2).float(), enable_gqa=True).transpose(1, 2)[0]
    kv_bytes = 2 * int(lengths.sum()) * hk * d * k.element_size()
    return q, k, v, lengths.to(device="cuda", dtype=torch.int32), ref, kv_bytes


def ragged_rows(rows):
    """rows ((longest, batch) pairs) over the builds named on the command line: JSON lines, the medians."""
    names, builds = builds_from_argv()
    summary = []
    for longest, batch in rows:
        q, k, v, seqlens, ref, kv_bytes = ragged_case(longest, batch)
        tags = {"keys": longest, "batch": batch, "lengths": "ragged"}
        with torch.no_grad():
            med = interleaved_medians(
                builds, lambda fa: fa.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens), ref, kv_bytes, tags)
        summary.append((f"ragged d128 32/8 {longest} b{batch}", med))
        del k, v
    print_medians(summary, names, "lengths d heads longest batch")


if __name__ == "__main__":
    ragged_rows(ROWS)
