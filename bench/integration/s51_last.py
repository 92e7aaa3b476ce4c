"""Session 51's last call: the two-level cluster combine's group index by a shift (decode_consumer.h) against the
tree before it (the two divisions of s51_groups.sh's tree), and a sweep of requested counts where one K/V head
splits (one cluster of 15 against two levels of 24-120 pieces) for the rule's choice between them.
s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians).

    python3 bench/integration/s51_last.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)] + [(64, 32, 8, "dense", 1000, 4, 0)]
ROWS += [(128, 8, 1, "dense", 4000, 1, s) for s in (0, 32)] + [(128, 32, 8, "dense", 3999, 1, 0)]
ROWS += [(128, 8, 1, "dense", 16100, 1, s) for s in (0, 24, 56, 120)]
ROWS += [(128, 8, 1, "dense", 32000, 1, s) for s in (0, 120)] + [(128, 8, 1, "dense", 65000, 2, 0)]

if __name__ == "__main__":
    run(ROWS)
