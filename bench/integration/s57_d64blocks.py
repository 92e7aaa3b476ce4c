"""Session 57: the narrow decode tile's kernel of one CTA a SM at d = 64 on blocks of 256 keys in two stages
(forward_config.h NARROW_D64_BLOCK_N, the tree) against 128 keys in four, builds side by side in one process
(s50_cluster.py's protocol, SDPA beside every row): decodes of several tiles a CTA, one wave, small batches
(split pieces, the cluster combine), requested counts, pages, an append, MHA.

    python3 bench/integration/s57_d64blocks.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(64, 32, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (1, 4, 8, 17, 24, 48, 64, 128)]
ROWS += [(64, 32, 8, "dense", 16384, b, 0) for b in (1, 8, 48)]
ROWS += [(64, 32, 8, "paged64", 4096, b, 0) for b in (4, 64)] + [(64, 32, 8, "paged16", 1024, 64, 0)]
ROWS += [(64, 32, 32, "dense", 1024, b, 0) for b in (2, 16)] + [(64, 32, 8, "append", 1000, 4, 0)]
ROWS += [(64, 32, 8, "dense", 1000, 4, s) for s in (2, 8)] + [(64, 32, 8, "dense", 16384, 4, 16)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
