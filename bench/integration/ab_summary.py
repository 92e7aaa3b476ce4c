#!/usr/bin/env python3
"""The summary table of a bench/sm90r_ab.py record: per row, each build's TFLOP/s averaged over the passes, its
ratio to the base build and to cuDNN, and the largest |out - cuDNN| of any build. Rows timed with --paired as
well get a second table: each build's speedup over the first build of the run's --builds, the median over
interleaved rounds (sm90r_ab.py time_paired), averaged over the passes, with its range over the passes, and
with --paired-peer each build's speedup over cuDNN timed in the same interleaving.

    ab_summary.py AB.jsonl BASE NAME ...   (the names in the order of the columns; "cudnn" is added)
"""
import collections
import json
import sys

path, base, names = sys.argv[1], sys.argv[2], sys.argv[3:]
columns = [base] + [n for n in names if n != base] + ["cudnn"]
rows = collections.defaultdict(list)
for line in open(path):
    if line.startswith('{"pass"'):
        r = json.loads(line)
        if "hdim" in r:
            rows[(r["hdim"], r["causal"], r["seqlen"])].append(r)


def ratio(m, a, b):
    return f"{m[a] / m[b]:.3f}" if m[a] and m[b] else "-"


others = [n for n in columns if n not in (base, "cudnn")]
print("d causal s | " + " ".join(columns) + " (mean of passes) | " +
      " ".join(f"{n}/{base}" for n in others) + " | " + " ".join(f"{n}/cudnn" for n in columns[:-1]) +
      " | max err")
for key, rs in sorted(rows.items()):
    m = {n: sum(r[n] for r in rs if n in r) / max(1, sum(1 for r in rs if n in r)) for n in columns}
    err = max(max(r["err"].values()) for r in rs)
    print(key, " ".join(f"{m[n]:.1f}" for n in columns), "|", " ".join(ratio(m, n, base) for n in others), "|",
          " ".join(ratio(m, n, "cudnn") for n in columns[:-1]), "|", f"{err:.4f}")

paired = {key: rs for key, rs in rows.items() if all("paired_speedup" in r for r in rs)}
if paired:
    print("paired (interleaved calls): speedup over the first build, mean of passes [min, max]")
    for key, rs in sorted(paired.items()):
        cells = []
        for n in [base] + others:
            v = [r["paired_speedup"][n] for r in rs if n in r["paired_speedup"]]
            if v:
                cells.append(f"{n} {sum(v) / len(v):.4f} [{min(v):.4f}, {max(v):.4f}]")
        # sm90r_ab.py --paired-peer: cuDNN interleaved too; a build's speedup over it is the ratio of the two
        # speedups over the first build, per pass.
        for n in [base] + others:
            v = [r["paired_speedup"][n] / r["paired_speedup"]["cudnn"] for r in rs
                 if n in r["paired_speedup"] and "cudnn" in r["paired_speedup"]]
            if v:
                cells.append(f"{n}/cudnn {sum(v) / len(v):.4f} [{min(v):.4f}, {max(v):.4f}]")
        print(key, " | ".join(cells))
