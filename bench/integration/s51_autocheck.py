"""Prepared in session 51 after its device time was spent (not yet run): the split-count rule's automatic
choices over one and two K/V heads (split_kv_plan.h: one cluster, two levels of clusters, or the counter),
each beside the requested counts the rule weighed, and SDPA's FA2 / cuDNN beside the dense rows. The final rule
was set from s51_last.sh's sweep of requested counts; this checks its automatic choices as such.
s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds of the named builds, medians).

    python3 bench/integration/s51_autocheck.py new        (one build: the tree)
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = []
for keys, asked in ((4000, (8, 32)), (8000, (15, 24)), (12000, (15, 40)), (16100, (15, 56, 120)),
                    (32000, (56, 120)), (65000, (56, 120))):
    ROWS += [(128, 8, 1, "dense", keys, 1, s) for s in (0,) + asked]
ROWS += [(128, 8, 1, "dense", 65000, 2, s) for s in (0, 32)] + [(64, 8, 1, "dense", 16100, 1, 0)]
ROWS += [(128, 8, 1, "paged64", 16100, 1, s) for s in (0, 15)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows of the rule's own count."""
    return layout == "dense" and splits == 0


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
