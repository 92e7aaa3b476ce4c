"""Session 51: clusters of up to 16 pieces for the narrow decode tile's split tiles (forward_config.h
kMaxClusterPieces; above the portable 8 the launch allows a non-portable cluster size), the slots sized by the
launch's rows, and the count rule weighing the cluster's pieces against the counter's (split_kv_plan.h
kClusterCountShare), builds side by side in one process (GPU).

s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians, caches with NaN past
the lengths). Builds: "base", CLUSTER_COMBINE=0 (every split through the arrival counter, session 49's rule), and
"new". An explicit count s runs the counter's combine in base and, where s pieces fit a cluster (at most 16, and
the slots), the cluster's in new; so num_splits=8 in new is session 50's cluster where it chose 8. Rows: few
tiles (batch 1 of GQA 32/8 and d256 16/8: 8 tiles; one K/V head of 8 q heads: 1-4 tiles, the case session 50's
rule capped at 8 pieces, 8 SMs streaming the cache), and session 50's 1000-key rows as a guard.

    python3 bench/integration/s51_cluster16.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, layout, n, 1, s) for layout, n in (("dense", 3999), ("dense", 16100), ("paged64", 16100))
        for s in (0, 8, 16)]
ROWS += [(256, 16, 8, "dense", n, 1, s) for n in (3999, 16100) for s in (0, 8, 15)]
ROWS += [(128, 8, 1, "dense", n, 1, s) for n in (4000, 16100, 65000) for s in (0, 8, 15, 32)]
ROWS += [(128, 8, 1, "dense", 16100, b, s) for b in (2, 4) for s in (0, 8, 15)]
ROWS += [(64, 8, 1, "dense", 16100, 1, s) for s in (0, 8, 16, 32)]
ROWS += [(256, 8, 1, "dense", 16100, 1, 0)]
ROWS += [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)] + [(64, 32, 8, "dense", 1000, 4, 0)]

if __name__ == "__main__":
    run(ROWS)
