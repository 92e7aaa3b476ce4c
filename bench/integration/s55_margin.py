"""Session 55: split_kv_tail's margin past two whole rounds (kTailRoundMargin), the rows around it, against the
same tree built with the tail split off (s55_sweep.py's protocol).

    python3 bench/integration/s55_margin.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 4096, b, 0) for b in (25, 26, 27, 34, 40, 41, 42, 43, 44)]
ROWS += [(128, 32, 8, "dense", 16384, b, 0) for b in (30, 42, 43, 44, 45, 46)]
ROWS += [(128, 32, 8, "dense", 1024, b, 0) for b in (36, 50)]

if __name__ == "__main__":
    run(ROWS, lambda *row: False)
