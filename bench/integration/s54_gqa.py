"""Session 54: requested split counts where s54_standing.py found cuDNN ahead at GQA 32/8 (d64 at 16k keys,
batch 1 / 4: 0.89 / 0.93x of its speed), on the tree's kernels (GPU; one build). At batch 1 the 8 tiles'
clusters of 16 do not all fit at once, so the launch lowers the count to 8 pieces of 16-17 blocks; a count the
clusters do not hold runs on the arrival counter's combine (through L2), with shorter pieces.

s50_cluster.py's protocol (graphed decode steps, bf16, three rounds, medians; caches with NaN past the lengths,
every output checked against the float32 SDPA math); SDPA beside the automatic rows.

    python3 bench/integration/s54_gqa.py new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(64, 32, 8, "dense", 16384, 1, s) for s in (0, 8, 9, 12, 16, 24, 32)]
ROWS += [(64, 32, 8, "dense", 16384, 4, s) for s in (0, 2, 3, 4, 6, 8)]
ROWS += [(64, 32, 8, "dense", 32768, 1, s) for s in (0, 9, 16, 32)]
ROWS += [(64, 32, 8, "dense", 8192, 1, s) for s in (0, 9, 16)]
ROWS += [(128, 32, 8, "dense", 16384, 1, s) for s in (0, 8, 9, 12, 16, 32)]
ROWS += [(128, 32, 8, "dense", 32768, 1, s) for s in (0, 9, 16)]
ROWS += [(256, 16, 8, "dense", 16384, 1, s) for s in (0, 9, 16)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the rows with the rule's count."""
    return splits == 0


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
