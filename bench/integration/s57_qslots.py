"""Session 57: the narrow decode tile's Q in two slots of its 8 rows (forward_config.h NARROW_Q_SLOTS) against
one slot of 64 rows, builds side by side in one process (s50_cluster.py's protocol, SDPA beside every row).
Decodes where a CTA runs several items (more tiles than SMs: the kernel of one CTA a SM past two tiles a SM,
over long keys, its split tail; MHA; pages), decodes of one tile a CTA (the kernel of two CTAs a SM), controls
of one wave.

    python3 bench/integration/s57_qslots.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (17, 24, 40, 48, 64, 96, 128)]
ROWS += [(128, 32, 8, "dense", 16384, b, 0) for b in (17, 20, 48, 64)]
ROWS += [(64, 32, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (24, 48, 64, 128)]
ROWS += [(128, 32, 32, "dense", 1024, b, 0) for b in (5, 16, 32)] + [(128, 32, 32, "dense", 4096, 16, 0)]
ROWS += [(128, 64, 8, "dense", 1024, 48, 0)]
ROWS += [(128, 32, 8, "paged64", 4096, b, 0) for b in (17, 64)] + [(128, 32, 8, "paged16", 1024, 64, 0)]
ROWS += [(256, 16, 8, "dense", 4096, b, 0) for b in (17, 64)]
ROWS += [(128, 32, 8, "dense", 4096, 8, 0), (128, 32, 8, "dense", 4000, 1, 0)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
