# Markdown table of a bench/sm90s_ab.py output (jsonl): TFLOP/s per build and cuDNN, and each
# build's ratio to the control ("ctrl" = base's kernels timed as a second build) and to cuDNN.
#   python3 bench/sm90s_table.py ab.jsonl [reference build, default ctrl]
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{\"hdim")]
ref = sys.argv[2] if len(sys.argv) > 2 else "ctrl"
builds = [k for k in rows[0] if k not in ("hdim", "causal", "seqlen", "err", "cudnn")]
others = [b for b in builds if b != ref]
head = ["d", "causal", "s"] + builds + ["cuDNN"] + [f"{b}/{ref}" for b in others] + [f"{b}/cuDNN" for b in builds]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
sums = {b: [] for b in others}
for r in rows:
    cells = [str(r["hdim"]), "yes" if r["causal"] else "no", str(r["seqlen"])]
    cells += [f"{r[b]:.0f}" for b in builds] + [f"{r['cudnn']:.0f}"]
    cells += [f"{r[b] / r[ref]:.3f}" for b in others] + [f"{r[b] / r['cudnn']:.2f}" for b in builds]
    for b in others:
        sums[b].append((r["hdim"], r["seqlen"], r[b] / r[ref]))
    print("| " + " | ".join(cells) + " |")
print()
for b in others:
    for d in sorted({x[0] for x in sums[b]}):
        short = [x[2] for x in sums[b] if x[0] == d and x[1] <= 1024]
        long = [x[2] for x in sums[b] if x[0] == d and x[1] >= 2048]
        line = f"{b}/{ref} d{d}: <= 1k mean {sum(short) / len(short):.3f}"
        if long:
            line += f", >= 2k mean {sum(long) / len(long):.3f}"
        print(line)
