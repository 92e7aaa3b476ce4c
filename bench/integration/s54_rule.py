"""Session 54: split_kv_plan.h's refitted choice between one cluster, one above the portable size and two
levels (fixed costs counted in bytes of key blocks, two levels up to 64 CTAs) against session 53's rule,
builds side by side in one process (GPU).

s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians; caches with NaN past
the lengths, every output checked against the float32 SDPA math). Rows: every shape whose automatic count the
refit changes on the host (split_kv_plan_test.cpp; the launch may lower a count whose clusters do not all
fit), and controls it leaves alone (one K/V head at 65000 keys, GQA 32/8 at 1000 keys, two K/V heads at
32000). SDPA beside the rows over one K/V head.

    python3 bench/integration/s54_rule.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 8, 1, "dense", n, 1, 0) for n in (3000, 4000, 6000, 8000, 11000, 16100, 32000, 65000)]
ROWS += [(128, 16, 2, "dense", n, 1, 0) for n in (4000, 11000, 16100, 24000, 32000)]
ROWS += [(128, 8, 1, "dense", n, 4, 0) for n in (4000, 6000)]
ROWS += [(128, 8, 1, "paged64", n, 1, 0) for n in (8000, 16100)]
ROWS += [(64, 8, 1, "dense", n, 1, 0) for n in (6000, 16100)]
ROWS += [(128, 32, 8, "dense", n, 1, 0) for n in (1000, 3000, 16384)]
ROWS += [(64, 32, 8, "dense", 6000, 1, 0)]
ROWS += [(256, 8, 1, "dense", n, 1, 0) for n in (2000, 3000, 4000, 6000, 8000)]
ROWS += [(256, 16, 8, "dense", n, 1, 0) for n in (2000, 3999)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows over one K/V head at batch 1."""
    return layout == "dense" and hk == 1 and batch == 1


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
