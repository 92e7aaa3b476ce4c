# Markdown table of bench/sm90m_run.sh's A/B rows (bench/sm90s_ab.py JSON lines): TFLOP/s per build, cuDNN,
# and the ratios that decide (new and cmp against base, ctrl and cuDNN; base/ctrl = the noise floor).
#   python3 bench/sm90m_table.py bench/sm90m_run1_ab.jsonl
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{") and '"hdim"' in line]
builds = [b for b in ("base", "cmp", "new", "ctrl") if rows and b in rows[0]]
ratios = [("new", "base"), ("new", "ctrl"), ("cmp", "base"), ("new", "cudnn"), ("base", "cudnn"), ("base", "ctrl")]
ratios = [(a, b) for a, b in ratios if a in builds + ["cudnn"] and b in builds + ["cudnn"]]
print("| d | causal | s | " + " | ".join(builds) + " | cuDNN | " + " | ".join(f"{a}/{b}" for a, b in ratios) + " |")
print("|---" * (4 + len(builds) + len(ratios)) + "|")
for r in rows:
    cells = [str(r["hdim"]), "yes" if r["causal"] else "no", str(r["seqlen"])]
    cells += [f"{r[b]:.0f}" for b in builds] + [f"{r['cudnn']:.0f}"]
    cells += [f"{r[a] / r[b]:.3f}" for a, b in ratios]
    print("| " + " | ".join(cells) + " |")
errs = {b: max(r["err"][b] for r in rows) for b in builds}
print(f"\nmax |out - cuDNN| over the rows: {errs}")
