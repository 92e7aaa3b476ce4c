"""Session 56: where the kernel of two CTAs a SM stops paying as keys grow (forward_config.h
TWO_CTAS_MAX_SEQLEN): the tree built with the limit raised past every row ("new") against the switch off
("base"), builds side by side in one process; s56_two.py's dense rows between 4096 and 16384 keys and
s55_ragged.py's lengths (half to all of the longest) at 8192.

    python3 bench/integration/s56_limit.py base new
"""

import torch

from s46_decode_ab import builds_from_argv, interleaved_medians, print_medians  # bench/integration/
from s50_cluster import run  # bench/integration/
from s55_ragged import ragged_case  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (4096, 8192, 12000) for b in (17, 20, 24, 32)]
ROWS += [(64, 32, 8, "dense", 8192, b, 0) for b in (17, 24)]
RAGGED = [(8192, b) for b in (17, 20, 24)]


def ragged_rows():
    names, builds = builds_from_argv()
    summary = []
    for longest, batch in RAGGED:
        q, k, v, seqlens, ref, kv_bytes = ragged_case(longest, batch)
        tags = {"keys": longest, "batch": batch, "lengths": "ragged"}
        with torch.no_grad():
            med = interleaved_medians(
                builds, lambda fa: fa.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens), ref, kv_bytes, tags)
        summary.append((f"ragged d128 32/8 {longest} b{batch}", med))
        del k, v
    print_medians(summary, names, "lengths d heads longest batch")


if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
    ragged_rows()
