"""Session 52: the records' cap at 32 x 8 x 256 floats (split_kv_plan.h kMaxTileRecordFloats, set from
s52_d256sweep.sh): the automatic counts of d256 decodes over 8-row tiles beside the requested counts the sweep
measured, and a d128 guard row (its count unchanged). One build (the tree).

    python3 bench/integration/s52_cap.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(256, 8, 1, "dense", 16100, 1, s) for s in (0, 16, 32)]
ROWS += [(256, 16, 2, "dense", 16100, 1, s) for s in (0, 16, 32)]
ROWS += [(256, 8, 1, "dense", 4000, 1, s) for s in (0, 16)]
ROWS += [(256, 8, 1, "paged64", 16100, 1, s) for s in (0, 16)] + [(128, 8, 1, "dense", 16100, 1, 0)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows of the rule's count."""
    return splits == 0 and layout == "dense"


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
