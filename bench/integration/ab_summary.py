#!/usr/bin/env python3
"""The summary table of a bench/sm90r_ab.py record: per row, each build's TFLOP/s averaged over the passes, its
ratio to the base build and to cuDNN, and the largest |out - cuDNN| of any build. Rows timed with --paired as
well get a second table: each build's speedup over the first build of the run's --builds, the median over
interleaved rounds (sm90r_ab.py time_paired), averaged over the passes, with its range over the passes, and
with --paired-peer each build's speedup over cuDNN timed in the same interleaving; rows timed with --sustained
the same table from its interleaved stints (time_sustained).

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
            key = (r["hdim"], r["causal"], r["seqlen"])
            if "hdim_v" in r:  # a (d, dv) pair: its own rows
                key = (f'{r["hdim"]}x{r["hdim_v"]}',) + key[1:]
            if "tokens" in r:  # another call size than the grid's (sm90r_ab.py --tokens): its own rows
                key = key + (f'{r["tokens"]} tokens',)
            rows[key].append(r)


def ratio(m, a, b):
    return f"{m[a] / m[b]:.3f}" if m[a] and m[b] else "-"


others = [n for n in columns if n not in (base, "cudnn")]


def row_order(item):
    """Rows by head dim (a (d, dv) pair after d = dv of its d), then causal, then length."""
    d = str(item[0][0])
    return (int(d.partition("x")[0]), d) + item[0][1:]


print("d causal s | " + " ".join(columns) + " (mean of passes) | " +
      " ".join(f"{n}/{base}" for n in others) + " | " + " ".join(f"{n}/cudnn" for n in columns[:-1]) +
      " | max err")
for key, rs in sorted(rows.items(), key=row_order):
    m = {n: sum(r[n] for r in rs if n in r) / max(1, sum(1 for r in rs if n in r)) for n in columns}
    err = max(max(r["err"].values()) for r in rs)
    print(key, " ".join(f"{m[n]:.1f}" for n in columns), "|", " ".join(ratio(m, n, base) for n in others), "|",
          " ".join(ratio(m, n, "cudnn") for n in columns[:-1]), "|", f"{err:.4f}")



def speedup_table(field, title):
    """The per-round speedups of sm90r_ab.py's interleaved timings (field "paired_speedup" from --paired,
    "sustained_speedup" from --sustained): over the first build, and over cuDNN where it was interleaved too (a
    build's speedup over it is the ratio of the two speedups over the first build, per pass)."""
    timed = {key: rs for key, rs in rows.items() if all(field in r for r in rs)}
    if not timed:
        return
    print(title)
    for key, rs in sorted(timed.items(), key=row_order):
        cells = []
        for n in [base] + others:
            v = [r[field][n] for r in rs if n in r[field]]
            if v:
                cells.append(f"{n} {sum(v) / len(v):.4f} [{min(v):.4f}, {max(v):.4f}]")
        for n in [base] + others:
            v = [r[field][n] / r[field]["cudnn"] for r in rs if n in r[field] and "cudnn" in r[field]]
            if v:
                cells.append(f"{n}/cudnn {sum(v) / len(v):.4f} [{min(v):.4f}, {max(v):.4f}]")
        print(key, " | ".join(cells))


speedup_table("paired_speedup", "paired (interleaved calls): speedup over the first build, mean of passes [min, max]")
speedup_table("sustained_speedup",
              "sustained (interleaved stints): speedup over the first build, mean of passes [min, max]")
