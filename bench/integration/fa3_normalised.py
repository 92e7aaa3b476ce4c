#!/usr/bin/env python3
"""The forward rows of a bench/compare.py record against the FlashAttention 3 anchor of
../shared/anchors/h200-2026-11-21.md, which is not installed on the GPU machine: per row ours, cuDNN (same run),
the anchor's FA3 and the cuDNN of the anchor's own FA3 run; ours / FA3 (absolute) and (ours / cuDNN here) /
(FA3 / cuDNN there) (normalised by each run's cuDNN, since cards and days differ by a few %); rows below 1 on the
normalised ratio are marked.

    fa3_normalised.py COMPARE.json [ANCHOR.md]

load_anchor and load_main_cudnn are shared with paired_standing.py (the same normalisations of sm90r_ab.py
--sustained / --paired-peer records).
"""
import json
import re
import sys

DEFAULT_ANCHOR = "/work/shared/anchors/h200-2026-11-21.md"


def load_anchor(path=DEFAULT_ANCHOR):
    """(d, causal, seqlen) -> (FA3 TFLOP/s, the cuDNN TFLOP/s of the anchor's FA3 run)."""
    fa3 = {}
    section = None
    for line in open(path):
        if line.startswith("## "):
            section = line
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if section and "FlashAttention 3 beside FA2 and cuDNN, d=128" in section and len(cells) == 8:
            if re.fullmatch(r"True|False", cells[0]):
                fa3[(128, cells[0] == "True", int(cells[1]))] = (float(cells[2]), float(cells[3]))
        if section and "FlashAttention 3 beside cuDNN, d=64 and d=256" in section and len(cells) == 7:
            if cells[0].isdigit():
                fa3[(int(cells[0]), cells[1] == "True", int(cells[2]))] = (float(cells[3]), float(cells[4]))
    return fa3


def load_main_cudnn(path=DEFAULT_ANCHOR):
    """(d, causal, seqlen) -> the cuDNN forward TFLOP/s of the anchor's main tables ("## d=128, causal", ...), measured
    the same day in the SDPA backends' own run. The FA3 runs' cuDNN columns dip below them on some rows (d128
    non-causal 4k: 606 against 652), which moves the normalised ratio by as much; both readings are printed."""
    main_cudnn = {}
    key = None
    for line in open(path):
        m = re.match(r"## d=(\d+), (non-causal|causal)\s*$", line)
        if line.startswith("## "):
            key = (int(m.group(1)), m.group(2) == "causal") if m else None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if key and len(cells) >= 3 and cells[0].isdigit():
            main_cudnn[key + (int(cells[0]),)] = float(cells[2])
    return main_cudnn


def main():
    record = json.load(open(sys.argv[1]))
    anchor = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_ANCHOR
    fa3, main_cudnn = load_anchor(anchor), load_main_cudnn(anchor)
    below = below_main = 0
    print("| d | causal | seqlen | ours | cuDNN | FA3 anchor | its cuDNN | ours / FA3 | normalised | by the main "
          "table's cuDNN |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in record["grid"]:
        if r["mode"] != "fwd":
            continue
        key = (r["hdim"], r["causal"], r["seqlen"])
        if key not in fa3:
            continue
        f, fc = fa3[key]
        norm = (r["flashattn"] / r["sdpa_cudnn"]) / (f / fc)
        norm_main = (r["flashattn"] / r["sdpa_cudnn"]) / (f / main_cudnn[key])
        below += norm < 1
        below_main += norm_main < 1
        print(f"| {key[0]} | {key[1]} | {key[2]} | {r['flashattn']:.1f} | {r['sdpa_cudnn']:.1f} | {f:.0f} | "
              f"{fc:.0f} | {r['flashattn'] / f:.3f} | {norm:.3f}{' below' if norm < 1 else ''} | "
              f"{norm_main:.3f}{' below' if norm_main < 1 else ''} |")
    print(f"\n{below} rows below the normalised FA3 anchor ({below_main} normalised by the main tables' cuDNN)")


if __name__ == "__main__":
    main()
