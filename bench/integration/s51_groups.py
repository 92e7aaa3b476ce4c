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

import torch

from s44_decode_splits import print_sdpa_rows  # bench/integration/
from s46_decode_ab import builds_from_argv, interleaved_medians, print_medians  # bench/integration/
from s49_cache_lengths import decode_case  # bench/integration/

# d, q heads, kv heads, layout, keys per sequence, batch, num_splits (0: the rule's), SDPA beside
ROWS = [(128, 8, 1, "dense", n, 1, 0, True) for n in (16100, 32000, 65000, 130000)]
ROWS += [(128, 8, 1, "dense", 65000, 2, 0, True), (128, 8, 1, "paged64", 65000, 1, 0, False)]
ROWS += [(64, 8, 1, "dense", 65000, 1, 0, True), (128, 16, 2, "dense", 65000, 1, 0, True)]
ROWS += [(128, 8, 2, "dense", 3000, 2, 24, False)]
ROWS += [(128, 32, 8, "dense", 1000, b, 0, False) for b in (1, 4)] + [(128, 32, 8, "dense", 16100, 1, 0, False)]
ROWS += [(128, 8, 1, "dense", 4000, 1, 0, False)]


def main():
    names, builds = builds_from_argv()
    summary = []
    for d, hq, hk, layout, length, batch, splits, sdpa in ROWS:
        q, kc, vc, extra, ref, kv_bytes, views = decode_case(d, hq, hk, layout, length, batch, torch.bfloat16)

        def call(fa):
            return fa.flash_attn_with_kvcache(q, kc, vc, num_splits=splits, **extra)

        tags = {"d": d, "heads": f"{hq}/{hk}", "layout": layout, "keys": length, "batch": batch,
                "num_splits": splits}
        with torch.no_grad():
            med = interleaved_medians(builds, call, ref, kv_bytes, tags)
            summary.append((f"{layout} d{d} {hq}/{hk} {length} b{batch} splits{splits}", med))
            if sdpa:
                print_sdpa_rows(f"d{d} {hq}/{hk}/{length}", batch, *(x.contiguous() for x in views), ref, kv_bytes)
        del kc, vc
    print_medians(summary, names, "layout d heads keys batch splits")


if __name__ == "__main__":
    main()
