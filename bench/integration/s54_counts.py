"""Session 54: the split counts of the narrow tile's few-tile decodes (8 packed rows of d128 / d64: one K/V head
of 8 q heads at batch 1, 2 and 4 K/V heads' tiles), requested counts around the rule's over 3000-32000 keys
(GPU; one build). s54_standing.py's sweep had found the rule 5-10% off the best requested count over one K/V
head at 6000-11000 keys (one cluster of 15 or three clusters of 8 where five or six clusters of 8 read faster).

s50_cluster.py's protocol (graphed decode steps, bf16, three rounds, medians; caches with NaN past the lengths,
every output checked against the float32 SDPA math). S54_ORDER=reverse runs the rows in the opposite order (a
second pass, so that a drift over the call does not pass for a count's effect).

    python3 bench/integration/s54_counts.py new
"""

import os

from s50_cluster import run  # bench/integration/

ONE = (0, 8, 12, 15, 16, 24, 32, 40, 48, 56, 64, 80, 96, 120)
# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 8, 1, "dense", n, 1, s) for n in (3000, 4000, 6000, 8000, 11000, 16100, 24000, 32000) for s in ONE]
ROWS += [(128, 16, 2, "dense", n, 1, s) for n in (4000, 8000, 16100, 32000) for s in (0, 8, 15, 16, 24, 32, 40, 48, 64)]
ROWS += [(128, 8, 1, "dense", n, 4, s) for n in (4000, 8000, 16100) for s in (0, 8, 15, 16, 24, 32)]
ROWS += [(64, 8, 1, "dense", n, 1, s) for n in (4000, 8000, 16100) for s in (0, 8, 15, 16, 24, 32, 40, 48, 56, 64)]
if os.environ.get("S54_ORDER") == "reverse":
    ROWS.reverse()

if __name__ == "__main__":
    run(ROWS, lambda *row: False)
