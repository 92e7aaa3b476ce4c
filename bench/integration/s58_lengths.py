"""Session 58: KV-cache decodes with the first tile's lengths prefetched into L2 as the kernel starts
(forward_config.h PREFETCH_CACHE_LENGTHS=1, package flashattn) against the read that waits for DRAM
(=0, flashattn_base); s50_cluster.py's protocol, SDPA beside every row. Short calls (one wave, splits at
small batch), many tiles, pages (the paged producer reads the lengths too), appends, d256.

    python3 bench/integration/s58_lengths.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(d, 32, 8, "dense", n, b, 0) for d in (64, 128) for n in (1024, 4096, 16384) for b in (1, 4, 8, 16)]
ROWS += [(d, 32, 8, "dense", n, b, 0) for d in (64, 128) for n in (1024, 4096) for b in (48, 64)]
ROWS += [(256, 16, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (1, 4)]
ROWS += [(128, 32, 8, "paged64", n, b, 0) for n in (1024, 4096) for b in (1, 8, 64)]
ROWS += [(64, 32, 8, "paged16", 1024, 64, 0), (64, 32, 8, "paged64", 4096, 4, 0)]
ROWS += [(128, 32, 8, "append", 1000, b, 0) for b in (1, 4)] + [(128, 32, 8, "dense", 4096, 16, 1)]
ROWS += [(64, 32, 32, "dense", 1024, b, 0) for b in (2, 16)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
