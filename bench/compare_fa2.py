# Joins our forward TFLOP/s with FA2's (bench/sdpa_fa2_forward.py) into a markdown table.
#   compare_fa2.py OURS.jsonl FA2.jsonl                 # rows of `flashattn_forward_check --backend cuda_sm80 bench` ("ours_fwd")
#   compare_fa2.py --tune tune_rows.jsonl --table forward_tuning.json FA2.jsonl
# With --tune (rows of bench/sm80_tune), "ours" is the shape the tuned table picks
# for (hdim, causal), "pre-tune" the kernel the table ran before the sweep.
import argparse, json

ap = argparse.ArgumentParser()
ap.add_argument("--tune")
ap.add_argument("--table")
ap.add_argument("files", nargs="*")
args = ap.parse_args()

rows = {}
for path in args.files:
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            rows.setdefault((r["hdim"], r["causal"], r["seqlen"]), {}).update(r)
if args.tune:
    winners = {}
    if args.table:
        for e in json.load(open(args.table)).get("entries", []):
            if e["dtype"] == "bf16":
                winners[(e["head_dim"], e["causal"])] = json.dumps(e["shape"], sort_keys=True)
    for line in open(args.tune):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["hdim"], r["causal"], r["seqlen"])
        slot = rows.setdefault(key, {})
        if r["shape"] == "table":
            slot["pre_tune"] = round(r["tflops"])
        elif json.dumps(r["shape"], sort_keys=True) == winners.get((r["hdim"], r["causal"])):
            slot["ours_fwd"] = round(r["tflops"])

print("| hdim | causal | seqlen | pre-tune | ours | fa2 | ours/fa2 |\n|---|---|---|---|---|---|---|")
for key in sorted(rows):
    r = rows[key]
    o, f = r.get("ours_fwd"), r.get("fa2_fwd")
    ratio = f"{o / f:.2f}" if o and f else "-"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {r.get('pre_tune', '-')} | {o} | {f} | {ratio} |")
