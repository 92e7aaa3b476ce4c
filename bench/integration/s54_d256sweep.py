"""Prepared in session 53 (not yet run): requested split counts of d256 decodes over 8-row tiles on the slots of
one row (the cluster combine from 8 pieces up: one cluster of 8-16, or two levels of clusters of 8; 4-7 pieces
lowered to 3 of whole records), beside the rule's count and SDPA. Data for the d256 count rule, which was fitted
on d128 (split_kv_plan.h). One build (the tree).

    python3 bench/integration/s54_d256sweep.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(256, 8, 1, "dense", 16100, 1, s) for s in (0, 8, 12, 16, 24, 32, 40, 56, 80)]
ROWS += [(256, 8, 1, "dense", 4000, 1, s) for s in (0, 3, 8, 12, 16, 24)]
ROWS += [(256, 8, 1, "dense", 65000, 1, s) for s in (0, 56, 120)]
ROWS += [(256, 8, 1, "paged64", 16100, 1, s) for s in (0, 24, 56)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the rule's dense count."""
    return splits == 0 and layout == "dense"


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
