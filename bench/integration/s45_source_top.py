"""The SASS lines with the most warp-stall samples in an ncu source-page CSV (s45_probe.sh)."""

import csv
import sys

lines = [line for line in open(sys.argv[1], errors="replace") if not line.startswith("==")]
rows = [r for r in csv.reader(lines) if r]
head = next((r for r in rows if any("Stall Sampling" in h for h in r)), None)
if head is None:
    print("no stall-sampling column; first lines:")
    for line in lines[:8]:
        print(line.rstrip()[:300])
    sys.exit(0)
body = rows[rows.index(head) + 1:]
col = next(i for i, h in enumerate(head) if "Stall Sampling" in h and "All" in h)
src = next((i for i, h in enumerate(head) if h.strip() in ("Source", "SASS")), 1)
addr = next((i for i, h in enumerate(head) if "Address" in h), 0)


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


total = sum(num(r[col]) for r in body if len(r) > col)
print("columns:", "|".join(head)[:300])
print("total samples", total, "instructions", len(body))
for r in sorted((r for r in body if len(r) > col), key=lambda r: -num(r[col]))[:int(sys.argv[2]) if len(sys.argv) > 2 else 40]:
    print(f"{num(r[col]):8.0f} {r[addr]} {r[src][:110]}")
