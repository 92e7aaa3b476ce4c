# Joins the JSON rows of sm80_forward_check bench and sdpa_fa2_forward.py into a table.
import json, sys
rows = {}
for path in sys.argv[1:]:
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault((r["hdim"], r["causal"], r["seqlen"]), {}).update(r)
print("| hdim | causal | seqlen | ours | fa2 | ours/fa2 |\n|---|---|---|---|---|---|")
for key in sorted(rows):
    r = rows[key]
    o, f = r.get("ours_fwd"), r.get("fa2_fwd")
    ratio = f"{o / f:.2f}" if o and f else "-"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {o} | {f} | {ratio} |")
