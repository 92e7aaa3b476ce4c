"""Session 51, second call: s51_cluster16.py's protocol over three builds: "base", the tree before session 51
(2041b43: clusters of at most 8 pieces, the count rule capped at 8), "new" (clusters of up to 16, slots for 16
pieces of 8 rows, the count rule weighing pieces of kMinSplitKVBlocks blocks and the counter's count,
split_kv_plan.h kClusterExtraBlocks; the launch bisects to the largest count whose clusters fit), and "slots8"
(new with the slots sized for 8 pieces of 8 rows, session 50's shared memory: whether the larger layout cost
s51_cluster16.sh's +0.7 us at 1000 keys). The 1000-key rows run first and last (whether a kernel given a
non-portable cluster size launches slower afterwards).

    python3 bench/integration/s51_cluster16b.py base new slots8
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
SHORT = [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)] + [(64, 32, 8, "dense", 1000, 4, 0)]
ROWS = SHORT[:]
ROWS += [(128, 8, 1, "dense", n, 1, 0) for n in (4000, 16100, 65000)] + [(128, 8, 1, "dense", 16100, 1, 12)]
ROWS += [(128, 32, 8, layout, 16100, 1, 0) for layout in ("dense", "paged64")]
ROWS += [(128, 32, 8, "dense", 3999, 1, 0), (64, 8, 1, "dense", 16100, 1, 0), (128, 8, 1, "dense", 16100, 4, 0)]
ROWS += SHORT

if __name__ == "__main__":
    run(ROWS)
