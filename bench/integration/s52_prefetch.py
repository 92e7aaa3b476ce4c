"""Session 52: the first work item's cache length prefetched into L1 at the decode kernels' entry
(producer.h prefetch_first_lengths) against the tree before it, builds side by side in one process (GPU).

s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians, caches with NaN past
the lengths, every output checked against the float32 SDPA math). Rows: short and long decodes on the narrow
tile, dense and paged, with and without splits; SDPA beside the dense GQA 32/8 rows at 1000 keys.

    python3 bench/integration/s52_prefetch.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)] + [(128, 32, 8, "dense", 1000, 1, 1)]
ROWS += [(128, 32, 8, "paged64", 1000, b, 0) for b in (1, 8)] + [(128, 32, 8, "append", 1000, 1, 0)]
ROWS += [(64, 32, 8, "dense", 1000, 4, 0), (256, 16, 8, "dense", 1000, 1, 0), (128, 32, 32, "dense", 1000, 1, 0)]
ROWS += [(128, 8, 1, "dense", n, 1, 0) for n in (4000, 16100, 65000)] + [(128, 32, 8, "dense", 16100, 1, 0)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense GQA 32/8 rows at 1000 keys, the rule's count."""
    return layout == "dense" and length == 1000 and hq == 32 and hk == 8 and splits == 0 and d == 128


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
