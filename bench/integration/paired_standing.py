#!/usr/bin/env python3
"""The standing from a bench/sm90r_ab.py --sustained record (or a --paired --paired-peer one): per row, BUILD's
speedup over cuDNN timed in the same interleaving (mean of the passes, with their range), the FA3 anchor's ratio to
its own cuDNN, and the normalised ratio (ours / cuDNN here) / (FA3 / cuDNN there), as fa3_normalised.py computes it
from a grid. A row counts as at or above a peer when the mean is >= 1. Records with --sustained rows are read by
those; a --paired one is not a standing (session 26): call-by-call interleaving gives ours and cuDNN one clock,
where under sustained load each kernel's clock follows its own energy per call, and it read ours 5-10% higher
against cuDNN than the grid on the causal rows.

    paired_standing.py AB.jsonl [BUILD] [ANCHOR.md]     (BUILD: default "new")
"""
import collections
import json
import sys

from fa3_normalised import DEFAULT_ANCHOR, load_anchor, load_main_cudnn


def main():
    path = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "new"
    anchor = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_ANCHOR
    fa3, main_cudnn = load_anchor(anchor), load_main_cudnn(anchor)
    records = [json.loads(line) for line in open(path) if line.startswith('{"pass"')]
    field = "sustained_speedup" if any("sustained_speedup" in r for r in records) else "paired_speedup"
    rows = collections.defaultdict(list)  # key -> per pass, build / cuDNN
    for r in records:
        speedup = r.get(field, {})
        if build in speedup and "cudnn" in speedup:
            rows[(r["hdim"], r["causal"], r["seqlen"])].append(speedup[build] / speedup["cudnn"])
    above_cudnn = above_fa3 = above_fa3_main = anchored = 0
    regime = field.split("_")[0]
    print(f"| d | causal | seqlen | {build} / cuDNN, {regime} [min, max] | FA3 / its cuDNN | normalised | by the "
          "main table's cuDNN |")
    print("|---|---|---|---|---|---|---|")
    for key, v in sorted(rows.items()):
        mean = sum(v) / len(v)
        above_cudnn += mean >= 1
        cells = f"| {key[0]} | {key[1]} | {key[2]} | {mean:.4f} [{min(v):.4f}, {max(v):.4f}] |"
        if key in fa3:
            f, fc = fa3[key]
            norm, norm_main = mean / (f / fc), mean / (f / main_cudnn[key])
            anchored += 1
            above_fa3 += norm >= 1
            above_fa3_main += norm_main >= 1
            cells += (f" {f / fc:.3f} | {norm:.3f}{' below' if norm < 1 else ''} | "
                      f"{norm_main:.3f}{' below' if norm_main < 1 else ''} |")
        else:
            cells += " - | - | - |"
        print(cells)
    print(f"\n{above_cudnn} of {len(rows)} rows at or above cuDNN; {above_fa3} of {anchored} at or above the "
          f"normalised FA3 anchor ({above_fa3_main} normalised by the main tables' cuDNN)")


if __name__ == "__main__":
    main()
