"""Session 51: the two-level cluster combine (several clusters of 8 pieces a tile, each cluster combined in its
first CTA's shared memory into one record, the tile's records combined through L2 by the last cluster to
arrive; split_kv_plan.h SplitKV groups), builds side by side in one process (GPU).

s50_cluster.py's protocol (graphed decode steps, bf16, three interleaved rounds, medians, caches with NaN past
the lengths, every output checked against the float32 SDPA math). Builds: "base", the tree before it (one
cluster a tile, else the arrival counter's 32 pieces at most: the records' cap), and "new". Rows: one or two
K/V heads (MQA, or a GQA model's heads split over GPUs) over 16k-130k keys, where the counter took over; 24
pieces asked (two levels in new, the counter in base); session 50/51's rows as a guard. SDPA's FA2 and cuDNN
beside the dense one-K/V-head rows (dense (b, h, s, d) copies of the keys).

    python3 bench/integration/s51_groups.py base new
"""

from s50_cluster import run  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's)
ROWS = [(128, 8, 1, "dense", n, 1, 0) for n in (16100, 32000, 65000, 130000)]
ROWS += [(128, 8, 1, "dense", 65000, 2, 0), (128, 8, 1, "paged64", 65000, 1, 0)]
ROWS += [(64, 8, 1, "dense", 65000, 1, 0), (128, 16, 2, "dense", 65000, 1, 0)]
ROWS += [(128, 8, 2, "dense", 3000, 2, 24)]
ROWS += [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4)] + [(128, 32, 8, "dense", 16100, 1, 0)]
ROWS += [(128, 8, 1, "dense", 4000, 1, 0)]


def sdpa_beside(d, hq, hk, layout, length, batch, splits):
    """SDPA beside the dense rows over one or two K/V heads from 16100 keys."""
    return layout == "dense" and hk <= 2 and length >= 16100


if __name__ == "__main__":
    run(ROWS, sdpa_beside, lambda d, hq, hk, length: f"d{d} {hq}/{hk}/{length}")
