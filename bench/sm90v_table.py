# Table of a bench/sm90v_ab.py JSONL file (helper sm90v): per row and pass, TFLOP/s of every build and cuDNN,
# each build's ratio to base, and base's and the builds' ratios to cuDNN.
#   python3 bench/sm90v_table.py bench/sm90v_run2_ab.jsonl [--builds kr,kr64,ctrl]
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--builds", default="kr,kr64,ctrl")
args = ap.parse_args()
rows = [json.loads(line) for line in open(args.file) if line.startswith("{\"tag")]
builds = args.builds.split(",")
print("| pass | d | causal | s | base | " + " | ".join(builds) + " | cuDNN | " +
      " | ".join(f"{b}/base" for b in builds) + " | base/cuDNN | " + " | ".join(f"{b}/cuDNN" for b in builds) + " |")
print("|" + "---|" * (6 + 3 * len(builds) + 1))
for r in rows:
    cells = [r["tag"], str(r["hdim"]), "C" if r["causal"] else "N", str(r["seqlen"]), f"{r['base']:.1f}"]
    cells += [f"{r[b]:.1f}" if b in r else "-" for b in builds]
    cells.append(f"{r['cudnn']:.1f}")
    cells += [f"{r[b] / r['base']:.3f}" if b in r else "-" for b in builds]
    cells.append(f"{r['base'] / r['cudnn']:.3f}")
    cells += [f"{r[b] / r['cudnn']:.3f}" if b in r else "-" for b in builds]
    print("| " + " | ".join(cells) + " |")
