"""Session 50: a split tile's pieces as one thread-block cluster on the narrow decode tile (forward_config.h
CLUSTER_COMBINE: each piece's record sent by st.async to the cluster's first CTA, which combines them), builds
side by side in one process (GPU).

s49_cache_lengths.py's decode steps (bf16, graphed, the builds interleaved over three rounds, medians; caches
whose rows past the lengths hold NaN, every output checked against the float32 SDPA math): the split rows with
the automatic count, and at batch 4 (where the arrival counter's combine had made 2 pieces the fastest,
split_kv_plan.h) explicit counts 2 / 4 / 8, so that the count's rule can be refitted to the cheaper combine.
SDPA's FlashAttention 2 and cuDNN beside the dense rows at 1000 keys.

    python3 bench/integration/s50_cluster.py base new    (S50_ROWS=sweep: the split counts' sweep)
"""

import os

import torch

from s44_decode_splits import print_sdpa_rows  # bench/integration/
from s46_decode_ab import builds_from_argv, interleaved_medians, print_medians  # bench/integration/
from s49_cache_lengths import decode_case  # bench/integration/

# d, q heads, kv heads, layout (dense / paged64 / paged16 / append), keys per sequence, batch, num_splits
ROWS = [(128, 32, 8, "dense", 1000, b, 0) for b in (1, 4, 8)]
ROWS += [(128, 32, 8, "dense", n, 1, 0) for n in (3999, 16100)]
ROWS += [(64, 32, 8, "dense", 1000, b, 0) for b in (1, 4)]
ROWS += [(256, 16, 8, "dense", n, 1, 0) for n in (1000, 3999)]
ROWS += [(128, 64, 8, "dense", 1000, 1, 0), (128, 32, 8, "paged64", 1000, 1, 0), (128, 32, 8, "paged64", 1000, 8, 0)]
ROWS += [(128, 32, 8, "append", 1000, 1, 0), (128, 32, 8, "dense", 3999, 8, 0)]
ROWS += [(d, 32, 8, "dense", 1000, 4, s) for d in (128, 64) for s in (1, 2, 4, 8)]
ROWS += [(128, 32, 8, "dense", 3999, 4, s) for s in (2, 4, 8)]
# S50_ROWS=sweep (s50_cluster2.sh): counts around the rule's on the cluster combine, once clusters that do not
# all fit at once take the counter's combine (forward_launch.h).
SWEEP = [(128, 32, 8, "dense", 1000, 1, s) for s in (4, 8)]
SWEEP += [(128, 32, 8, "dense", 1000, 4, s) for s in (2, 3, 4)]
SWEEP += [(128, 32, 8, "dense", 1000, 8, s) for s in (1, 2)]
SWEEP += [(128, 32, 8, "dense", 3999, 4, s) for s in (2, 3)]
SWEEP += [(128, 32, 8, layout, 16100, 1, s) for layout in ("dense", "paged64") for s in (8, 16)]
SWEEP += [(256, 16, 8, "dense", n, 1, s) for n in (1000, 3999) for s in (4, 8, 16)]
SWEEP += [(64, 32, 8, "dense", 1000, 4, s) for s in (1, 2, 3)]
SWEEP += [(128, 64, 8, "dense", 1000, 1, s) for s in (4, 8)]
if os.environ.get("S50_ROWS") == "sweep":
    ROWS = SWEEP


def sdpa_at_1000_keys(d, hq, hk, layout, length, batch, splits):
    """The rows SDPA's FA2 and cuDNN run beside: dense GQA 32/8 at 1000 keys, the rule's count."""
    return layout == "dense" and length == 1000 and hk == 8 and splits == 0 and hq == 32


def run(rows, sdpa_beside=sdpa_at_1000_keys, sdpa_label=lambda d, hq, hk, length: f"d{d}/{length}"):
    """rows (ROWS' form) over the builds named on the command line: JSON lines, SDPA's rows (where
    sdpa_beside(*row)), the medians."""
    names, builds = builds_from_argv()
    summary = []
    for d, hq, hk, layout, length, batch, splits in rows:
        q, kc, vc, extra, ref, kv_bytes, views = decode_case(d, hq, hk, layout, length, batch, torch.bfloat16)

        def call(fa):
            return fa.flash_attn_with_kvcache(q, kc, vc, num_splits=splits, **extra)

        tags = {"d": d, "heads": f"{hq}/{hk}", "layout": layout, "keys": length, "batch": batch,
                "num_splits": splits}
        with torch.no_grad():
            med = interleaved_medians(builds, call, ref, kv_bytes, tags)
            summary.append((f"{layout} d{d} {hq}/{hk} {length} b{batch} splits{splits}", med))
            if sdpa_beside(d, hq, hk, layout, length, batch, splits):
                print_sdpa_rows(sdpa_label(d, hq, hk, length), batch, *(x.contiguous() for x in views), ref,
                                kv_bytes)
        del kc, vc
    print_medians(summary, names, "layout d heads keys batch splits")


if __name__ == "__main__":
    run(ROWS)
