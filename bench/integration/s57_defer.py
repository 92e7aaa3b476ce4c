"""Session 57 (prepared): KV-cache decodes whose prepare kernel appends nothing, with the producer's wait for it
after the first tile's loads (forward_config.h DEFER_PREPARE_WAIT=1, package flashattn) against the wait before
them (the tree's default, flashattn_base); s50_cluster.py's protocol, SDPA beside every row. Split decodes at
small batch (arrival counters), many tiles (the dynamic schedule's counter), the tail split, pages; an append as
the control (its prepare kernel writes the cache: the wait stays first).

    python3 bench/integration/s57_defer.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(d, 32, 8, "dense", n, b, 0) for d in (64, 128) for n in (1024, 4096, 16384) for b in (1, 4, 8)]
ROWS += [(d, 32, 8, "dense", n, b, 0) for d in (64, 128) for n in (1024, 4096) for b in (40, 48, 64)]
ROWS += [(256, 16, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (1, 4)]
ROWS += [(128, 32, 8, "paged64", n, b, 0) for n in (1024, 4096) for b in (1, 8, 64)]
ROWS += [(128, 32, 8, "append", 1000, b, 0) for b in (1, 4)] + [(128, 32, 8, "dense", 4096, 16, 1)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
