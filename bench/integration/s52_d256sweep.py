"""Session 52: requested split counts of d256 decodes over 8-row tiles (one K/V head, 8 query heads), where the
cluster slots hold 3 pieces and the counter's count is capped at 16 (split_kv_plan.h kMaxTileRecordFloats), and
cuDNN reads 1.14-1.40x faster (s52_combine3.sh). Data for the next rule; one build (the tree).

    python3 bench/integration/s52_d256sweep.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(256, 8, 1, "dense", 16100, 1, s) for s in (0, 3, 8, 12, 24, 32, 48)]
ROWS += [(256, 8, 1, "dense", 4000, 1, s) for s in (0, 3, 4, 8, 24)]
ROWS += [(256, 16, 2, "dense", 16100, 1, s) for s in (0, 8, 24)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the rule's count."""
    return splits == 0


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
