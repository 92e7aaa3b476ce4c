"""Session 56: where the kernel of two CTAs a SM stops paying as keys grow (forward_config.h
TWO_CTAS_MAX_SEQLEN): the tree built with the limit raised past every row ("new") against the switch off
("base"), builds side by side in one process; s56_two.py's dense rows between 4096 and 16384 keys and
s55_ragged.py's lengths (half to all of the longest) at 8192.

    python3 bench/integration/s56_limit.py base new
"""

from s50_cluster import run  # bench/integration/
from s55_ragged import ragged_rows  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (4096, 8192, 12000) for b in (17, 20, 24, 32)]
ROWS += [(64, 32, 8, "dense", 8192, b, 0) for b in (17, 24)]
RAGGED = [(8192, b) for b in (17, 20, 24)]


if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
    ragged_rows(RAGGED)
