"""Session 56: the kernel of two CTAs a SM with Q's and O's buffers cut to the narrow tile's 8 rows and a third
stage of K and V (ForwardConfig kQRows, kStages), its key limit raised past every row ("limit", built with
-DFLASHATTN_SM90_TWO_CTAS_MAX_SEQLEN=20000), against the switch off ("base"): where the two-stage form lost
(long keys at 17-20 sequences, lengths of half to all of the keys) and where it won (1024-4096 keys).

    python3 bench/integration/s56_three.py base limit
"""

from s50_cluster import run  # bench/integration/
from s55_ragged import ragged_rows  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", 1024, b, 0) for b in (17, 24, 33)]
ROWS += [(128, 32, 8, "dense", n, b, 0) for n in (4096, 8192, 16384) for b in (17, 20, 32)]
ROWS += [(64, 32, 8, "dense", n, 17, 0) for n in (1024, 4096, 16384)]
ROWS += [(128, 32, 32, "dense", 1024, 5, 0), (128, 32, 8, "paged64", 8192, 17, 0)]
RAGGED = [(n, b) for n in (8192, 16384) for b in (17, 20)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
    ragged_rows(RAGGED)
