"""Session 55: the last round's tiles split (forward_config.h SPLIT_KV_TAIL, split_kv_plan.h split_kv_tail)
against the tree with the switch off, builds side by side in one process (s50_cluster.py's protocol, SDPA
beside every row of the new build's automatic count). Decodes of more tiles than SMs (GQA 32/8 at batch
17-40, 136-320 tiles; d64, d256 16/8, pages of 64), and controls that the switch leaves alone (whole rounds,
a wave or less).

    python3 bench/integration/s55_tail.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (1024, 4096, 16384) for b in (17, 20, 24, 28, 32, 40)]
ROWS += [(64, 32, 8, "dense", 4096, b, 0) for b in (17, 24, 32)]
ROWS += [(256, 16, 8, "dense", 4096, b, 0) for b in (17, 20, 24)]
ROWS += [(128, 32, 8, "paged64", 4096, b, 0) for b in (17, 24)]
ROWS += [(128, 32, 8, "dense", n, b, 0) for n, b in ((4096, 16), (16384, 33), (4000, 1))]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
