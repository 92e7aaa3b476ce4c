"""Session 54: where the decode steps stand against PyTorch SDPA's cuDNN and FlashAttention 2 backends after
sessions 47-53's narrow-tile work, over the shapes a serving user runs (GPU; one build).

s50_cluster.py's protocol (graphed decode steps, bf16, three rounds, medians; caches whose rows past the lengths
hold NaN, every output checked against the float32 SDPA math), SDPA on dense (b, h, s, d) copies of the same keys
beside every row with the automatic count. Rows: GQA 32/8 at d128 (Llama-3-8B-like) and d64, 16/8 at d256
(Gemma-2-9B-like), 64/8 at d128 (8 rows a tile), one K/V head (8/1) at d128 over 2000-16100 keys, pages of 64;
batch 1-32 over 1024-32768 keys. S54_ROWS=sweep: requested counts around the one-K/V-head 6000-11000-key rows
(session 53 left 8000 keys as the length where cuDNN still leads).

    python3 bench/integration/s54_standing.py new
"""

import os

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (1024, 4096, 8192, 16384, 32768) for b in (1, 4, 8, 16, 32)]
ROWS += [(64, 32, 8, "dense", n, b, 0) for n in (1024, 4096, 16384) for b in (1, 4, 8, 16)]
ROWS += [(256, 16, 8, "dense", n, b, 0) for n in (1024, 4096, 16384) for b in (1, 4, 8, 16)]
ROWS += [(128, 64, 8, "dense", n, b, 0) for n in (4096, 16384) for b in (1, 4)]
ROWS += [(128, 8, 1, "dense", n, 1, 0) for n in (2000, 4000, 6000, 8000, 11000, 16100)]
ROWS += [(128, 8, 1, "dense", n, 4, 0) for n in (8000, 16100)]
ROWS += [(128, 32, 8, "paged64", 16384, b, 0) for b in (1, 8)]
SWEEP = [(128, 8, 1, "dense", n, 1, s) for n in (6000, 8000, 11000) for s in (0, 8, 12, 15, 16, 24, 32, 40, 48)]
if os.environ.get("S54_ROWS") == "sweep":
    ROWS = SWEEP


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside every row with the rule's count."""
    return splits == 0


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
