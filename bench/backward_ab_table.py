#!/usr/bin/env python3
"""A table of bench/backward_compare.py's JSON lines: per row, each flashattn implementation's TFLOP/s, its time
against the base package's build of the same backend (NAME_base, from --base-package) where there is one, and
its speed against SDPA's cuDNN backward. The A/B device calls append it to their summaries
(bench/sm90_device_common.sh, backward_compare_vs_base), so that a call's result reads at a glance.

    python3 bench/backward_ab_table.py results.jsonl [more.jsonl ...]
"""

from __future__ import annotations

import json
import sys


def implementations(row):
    """The flashattn implementations of a row (not SDPA's, not the base builds), in the row's order."""
    names = [key[: -len("_ms")] for key in row if key.endswith("_ms")]
    return [n for n in names if not n.startswith("sdpa") and not n.endswith("_base")]


def table(rows):
    lines = []
    for row in rows:
        head = f"d{row['d']} {'causal' if row['causal'] else 'non-causal'} {row['seqlen']}"
        if row.get("softcap") or row.get("alibi"):
            head += f" softcap {row.get('softcap', 0)}{' alibi' if row.get('alibi') else ''}"
        if row.get("dropout"):
            head += f" dropout {row['dropout']}"
        cudnn = row.get("sdpa_cudnn_ms")
        cells = []
        for name in implementations(row):
            cell = f"{name} {row[name + '_tflops']:.1f}"
            base = row.get(name + "_base_ms")
            if base:
                cell += f" (time x{row[name + '_ms'] / base:.3f} of base)"
            if cudnn:  # (with softcap / ALiBi, SDPA's plain attention: row["sdpa_plain"])
                cell += f" {cudnn / row[name + '_ms']:.3f}x cuDNN{' plain' if row.get('sdpa_plain') else ''}"
            cells.append(cell)
        if row.get("sdpa_flash_ms"):
            cells.append(f"SDPA FA2 {row['sdpa_flash_tflops']:.1f}")
        if row.get("sdpa_refused"):
            cells.append("refused: " + ",".join(row["sdpa_refused"]))
        rel = [row[k] for k in row if k.endswith("_maxrel") and not k.startswith("sdpa")]
        if rel:
            cells.append(f"maxrel {max(rel):.4f}")
        if "sdpa_cudnn_maxrel" in row:
            cells.append(f"cuDNN's maxrel {row['sdpa_cudnn_maxrel']:.4f}")
        lines.append(f"{head}: " + "; ".join(cells))
    return lines


def main(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.startswith("{")]
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main(sys.argv[1:])
