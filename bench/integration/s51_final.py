"""Session 51's final rows: s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds,
medians, caches with NaN past the lengths) over "base", the tree before session 51 (2041b43), and "new", the
final tree: clusters of up to 16 pieces, the count rule of split_kv_plan.h (kClusterExtraBlocks), the launch's
bisection to the largest count whose clusters fit, the branch-free combine of rounds of 8.

    python3 bench/integration/s51_final.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)] + [(64, 32, 8, "dense", 1000, 4, 0)]
ROWS += [(128, 32, 8, "append", 1000, 1, 0), (128, 32, 8, "paged64", 1000, 1, 0)]
ROWS += [(128, 8, 1, "dense", n, 1, 0) for n in (4000, 16100, 65000)] + [(128, 8, 1, "dense", 16100, 4, 0)]
ROWS += [(64, 8, 1, "dense", 16100, 1, 0), (128, 8, 1, "paged64", 16100, 1, 0)]
ROWS += [(128, 32, 8, layout, 16100, 1, 0) for layout in ("dense", "paged64")] + [(128, 32, 8, "dense", 3999, 1, 0)]
ROWS += [(256, 16, 8, "dense", n, 1, 0) for n in (1000, 3999, 16100)] + [(256, 8, 1, "dense", 16100, 1, 0)]
ROWS += [(256, 32, 8, "dense", 3999, 1, 0)]

if __name__ == "__main__":
    run(ROWS)
