"""Session 53: the split-count rule's automatic choices beside requested counts, on the session's final kernels
(the rows' owners make the cluster's combine and the final one cheaper, so the counts that session 51's rule
was fitted to may no longer be the fastest). One K/V head at d128 over 4000-65000 keys (one cluster, two levels,
the counter), two K/V heads, GQA 32/8 at 1000 keys; SDPA beside the automatic dense rows.
s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians).

    python3 bench/integration/s53_sweep.py new        (one build: the tree)
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = []
for keys, asked in ((4000, (8, 12, 16, 24, 32)), (8000, (8, 15, 24, 40)), (16100, (15, 24, 40, 56, 80, 120)),
                    (32000, (40, 56, 80, 120)), (65000, (56, 80, 120))):
    ROWS += [(128, 8, 1, "dense", keys, 1, s) for s in (0,) + asked]
ROWS += [(128, 16, 2, "dense", 16100, 1, s) for s in (0, 16, 24, 40, 56)]
ROWS += [(128, 32, 8, "dense", 1000, 1, s) for s in (0, 4, 8, 12, 16)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows of the rule's own count."""
    return layout == "dense" and splits == 0 and hk <= 2


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
