"""Session 56: the narrow decode kernel of two CTAs a SM (forward_config.h TWO_CTAS_PER_SM) against the tree
built with the switch off (one CTA a SM, the last round's tiles split: session 55's SPLIT_KV_TAIL), builds side
by side in one process (s50_cluster.py's protocol, SDPA beside every row). Decodes of more tiles than SMs:
GQA 32/8 d128 at batch 17-64 (136-512 tiles), d64, MHA (32 tiles a sequence), pages of 64 and 16; controls
that the switch leaves alone (a wave or less, d256).

    python3 bench/integration/s56_two.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 32, 8, "dense", n, b, 0) for n in (1024, 4096, 16384) for b in (17, 20, 24, 32, 33, 40, 48, 64)]
ROWS += [(64, 32, 8, "dense", n, b, 0) for n in (1024, 4096) for b in (17, 24, 32, 48)]
ROWS += [(128, 32, 32, "dense", 1024, b, 0) for b in (5, 8)]
ROWS += [(128, 32, 8, "paged64", 4096, b, 0) for b in (17, 32)] + [(128, 32, 8, "paged16", 4096, 24, 0)]
ROWS += [(128, 32, 8, "dense", n, b, 0) for n, b in ((4096, 16), (4096, 8), (4000, 1))]
ROWS += [(256, 16, 8, "dense", 4096, 17, 0)]

if __name__ == "__main__":
    run(ROWS, lambda *row: True, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
