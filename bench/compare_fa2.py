# Joins our forward TFLOP/s with FA2's (bench/sdpa_fa2_forward.py) into a markdown table.
#   compare_fa2.py OURS.jsonl FA2.jsonl                 # rows of `flashattn_forward_check --backend cuda_sm80 bench` ("ours_fwd")
#   compare_fa2.py --tune tune_rows.jsonl --table forward_tuning.json FA2.jsonl
# With --tune (rows of bench/sm80_tune): "table" is cuda_sm80::run with the table the
# binary was built with (bf16; "fp16" the same on fp16), "ours" the shape the (new)
# tuned table picks for (hdim, causal) in the backend's tile order (heads fastest when
# causal), "other order" that shape in the other tile order; "table (sync)" the table
# call timed the pre-v7 way (no L2 flush, host launch cost inside the interval).
# FA2 fp16 ("fa2_fp16_fwd", sdpa_fa2_forward.py ... fp16) beside the fp16 table call when given.
# "table/fa2" is the ratio of what the library runs (cuda_sm80::run) to FA2. A second table gives the
# softcap / ALiBi / dropout kernels (variant rows) beside the plain one and FA2 with dropout.
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
variants = {}
if args.tune:
    winners = {}
    if args.table:
        for e in json.load(open(args.table)).get("entries", []):
            if e["dtype"] == "bf16" and "max_seqlen_q" not in e and "general" not in e:
                winners[(e["head_dim"], e["causal"])] = json.dumps(e["shape"], sort_keys=True)
    for line in open(args.tune):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["hdim"], r["causal"], r["seqlen"])
        variant = r.get("variant", "plain")
        slot = rows.setdefault(key, {}) if variant == "plain" else variants.setdefault(key, {})
        if r["shape"] == "table_sync":
            slot["table_sync"] = round(r["tflops"])
        elif r["shape"] == "table":
            slot[("table_" + r.get("dtype", "bf16")) if variant == "plain" else "table_" + variant] = round(r["tflops"])
        elif json.dumps(r["shape"], sort_keys=True) == winners.get((r["hdim"], r["causal"])):
            if variant != "plain":
                slot["ours_" + variant] = round(r["tflops"])
            elif r.get("order", "m_fastest") == ("heads_fastest" if r["causal"] else "m_fastest"):
                slot["ours_fwd"] = round(r["tflops"])  # the order the backend runs (backend.cu)
            else:
                slot["other_order"] = round(r["tflops"])

print("| hdim | causal | seqlen | other order | table (sync) | table | ours | fp16 table | fa2 | ours/fa2 | table/fa2 |"
      " fa2 fp16 | fp16 table/fa2 fp16 |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
def fp16_ratio(r):
    ours, peer = r.get("table_fp16"), r.get("fa2_fp16_fwd")
    return f"{ours / peer:.2f}" if ours and peer else "-"


for key in sorted(rows):
    r = rows[key]
    o, f = r.get("ours_fwd"), r.get("fa2_fwd")
    ratio = f"{o / f:.2f}" if o and f else "-"
    tb = r.get("table_bf16")
    table_ratio = f"{tb / f:.2f}" if tb and f else "-"
    print(f"| {key[0]} | {key[1]} | {key[2]} | {r.get('other_order', '-')} | {r.get('table_sync', '-')} | {tb} | {o} | "
          f"{r.get('table_fp16', '-')} | {f} | {ratio} | {table_ratio} | {r.get('fa2_fp16_fwd', '-')} | "
          f"{fp16_ratio(r)} |")
if variants:
    print("\nkGeneral kernels (TFLOP/s; table = cuda_sm80::run, winner = the tuned shape; plain = same problem without"
          " the modifier; fa2 dropout = SDPA FLASH_ATTENTION with dropout_p 0.1)\n")
    print("| hdim | causal | seqlen | plain | softcap | alibi | dropout | winner softcap/alibi/dropout | fa2 dropout |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(variants):
        v, r = variants[key], rows.get(key, {})
        print(f"| {key[0]} | {key[1]} | {key[2]} | {r.get('table_bf16', '-')} | {v.get('table_softcap', '-')} | "
              f"{v.get('table_alibi', '-')} | {v.get('table_dropout', '-')} | {v.get('ours_softcap', '-')}/"
              f"{v.get('ours_alibi', '-')}/{v.get('ours_dropout', '-')} | {r.get('fa2_dropout_fwd', '-')} |")
