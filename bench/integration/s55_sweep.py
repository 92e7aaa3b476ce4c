"""Session 55: the last round's split (SPLIT_KV_TAIL) over every batch size from 17 to 50 sequences of GQA 32/8
d128 at 4096 keys, a spread of them at 1024 / 16384 keys, and other group shapes (MHA rows, groups of 8, the
64-row tile's groups of 16, d64, d256), against the same tree built with the switch off: where the rule
splits, no row may read slower. Builds side by side in one process (s50_cluster.py's protocol), no SDPA.

    python3 bench/integration/s55_sweep.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 4096, b, 0) for b in range(17, 51)]
ROWS += [(128, 32, 8, "dense", 1024, b, 0) for b in (18, 19, 21, 22, 23, 25, 26, 27, 29, 30, 31, 33, 36, 45, 50)]
ROWS += [(128, 32, 8, "dense", 16384, b, 0) for b in (18, 22, 26, 30, 34, 45, 50)]
ROWS += [(128, 32, 32, "dense", 4096, b, 0) for b in (5, 6, 7)]
ROWS += [(128, 64, 8, "dense", 4096, 17, 0), (128, 32, 2, "dense", 4096, 70, 0), (128, 32, 2, "dense", 4096, 80, 0)]
ROWS += [(64, 32, 8, "dense", 4096, b, 0) for b in (20, 28)]
ROWS += [(256, 16, 8, "dense", 4096, b, 0) for b in (28, 40)]

if __name__ == "__main__":
    run(ROWS, lambda *row: False)
