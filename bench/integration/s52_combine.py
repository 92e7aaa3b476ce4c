"""Session 52: the narrow tile's combines over float4 units in registers (decode_consumer.h sum_pieces: every
row count, 16 loads in flight a thread, independent weights) against the tree before (8-row tiles at dv 128 and
4-8-row ones at dv 256 combined through L2 by split_kv.h's combine, warp 0 holding the rows; the cluster's slots
one unit at a time). Builds side by side in one process (GPU).

s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians, caches with NaN past
the lengths, every output checked against the float32 SDPA math). Rows: one and two K/V heads (8-row tiles:
the two levels' final combine, one cluster, the counter), d256 tiles of 8, 4 and 2 rows, d64, GQA 32/8 (4-row
tiles: one unit a thread before and after, the guard); SDPA's FA2 and cuDNN beside the dense rows over one or
two K/V heads.

    python3 bench/integration/s52_combine.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 8, 1, "dense", n, 1, 0) for n in (4000, 16100, 32000, 65000)]
ROWS += [(128, 8, 1, "dense", 65000, 2, 0), (128, 16, 2, "dense", 16100, 1, 0), (128, 8, 1, "dense", 4000, 1, 20)]
ROWS += [(128, 8, 1, "paged64", 16100, 1, 0), (64, 8, 1, "dense", 16100, 1, 0)]
ROWS += [(256, 8, 1, "dense", n, 1, 0) for n in (4000, 16100)]
ROWS += [(256, 8, 2, "dense", 16100, 1, 0), (256, 16, 8, "dense", 3999, 1, 0)]
ROWS += [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4)] + [(128, 32, 8, "dense", 16100, 1, 0)]
# From s52_combine3.sh on: more guard rows (one unit a thread).
ROWS += [(64, 32, 8, "dense", 1000, 4, 0), (256, 16, 8, "dense", 1000, 1, 0), (128, 32, 8, "paged64", 1000, 8, 0)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows over one or two K/V heads, the rule's count."""
    return layout == "dense" and hk <= 2 and splits == 0


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
