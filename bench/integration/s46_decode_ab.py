"""Session 46: small-batch KV-cache decoding, builds side by side in one process (GPU).

The packages named on the command line (sm90_build_py installs each as flashattn_NAME, "new" as flashattn) run
flash_attn_with_kvcache's automatic choice on the same tensors (GQA 32/8, d128, bf16, one query row, a full
dense cache; at 16384 keys also a paged cache of 256-row pages), CUDA-graph replays timed by events
(s44_append.graphed_us), the builds interleaved over ROUNDS rounds (medians), each output checked against the
float32 SDPA math; SDPA's FlashAttention 2 and cuDNN backends once per row (print_sdpa_rows). A JSON line per
measurement, then per row the medians and each build's ratio to the first one named.

    python3 bench/integration/s46_decode_ab.py base fr new
"""

import importlib
import json
import statistics
import sys

import torch

from s44_decode_splits import decode_problem, print_sdpa_rows, timed_row  # bench/integration/

ROWS = [(1024, b) for b in (1, 4, 8)] + [(4096, b) for b in (1, 2, 4, 8)] + \
       [(16384, b) for b in (1, 2, 4, 8)] + [(65536, 1)]
ROUNDS = 3


def package(name):
    """The build sm90_build_py installed as NAME ("new" is flashattn itself)."""
    return importlib.import_module("flashattn" if name == "new" else f"flashattn_{name}")


def builds_from_argv():
    """The build names on the command line and their packages (name -> package), the random seed set to 0."""
    names = sys.argv[1:]
    builds = {n: package(n) for n in names}
    torch.manual_seed(0)
    return names, builds


def interleaved_medians(builds, call, ref, kv_bytes, tags):
    """ROUNDS rounds over the builds (a dict name -> package) of call(package), each round every build once: a JSON
    line per measurement (tags first), and the median time per build."""
    times = {n: [] for n in builds}
    for rnd in range(ROUNDS):
        for n, fa in builds.items():
            row = timed_row(lambda fa=fa: call(fa), ref, kv_bytes)
            print(json.dumps({**tags, "build": n, "round": rnd, **row}), flush=True)
            if "us" in row:
                times[n].append(row["us"])
    return {n: statistics.median(t) for n, t in times.items() if t}


def print_medians(summary, names, columns):
    """The summary's rows (label, medians per build) as '#' lines: each build's median and its ratio to the first."""
    first = names[0]
    print(f"# medians (us) and ratios to {first}: {columns} " + " ".join(names))
    for label, med in summary:
        cells = " ".join(f"{med[n]:.2f}" + (f" ({med[n] / med[first]:.3f})" if n != first and first in med else "")
                         for n in names if n in med)
        print(f"# {label}: {cells}")


def main():
    names = sys.argv[1:]
    builds = {n: package(n) for n in names}
    torch.manual_seed(0)
    dt = torch.bfloat16
    hq, hk, d = 32, 8, 128
    summary = []
    for cache, batch in ROWS:
        q, k, v, seqlens, kv_bytes, (qt, kt, vt), ref = decode_problem(batch, cache, hq, hk, d, dt)
        layouts = {"dense": (k, v, {})}
        if cache == 16384:
            page = 256
            blocks = batch * cache // page
            perm = torch.randperm(blocks, device="cuda")
            kp = torch.empty(blocks, page, hk, d, device="cuda", dtype=dt)
            vp = torch.empty_like(kp)
            kp[perm] = k.reshape(blocks, page, hk, d)
            vp[perm] = v.reshape(blocks, page, hk, d)
            layouts["paged256"] = (kp, vp, {"block_table": perm.view(batch, cache // page).to(torch.int32)})
        with torch.no_grad():
            timed_row(lambda: builds[names[0]].flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens), ref,
                      kv_bytes)  # untimed warm-up: a process's first graph reads slow
            for layout, (kk, vv, extra) in layouts.items():
                med = interleaved_medians(
                    builds, lambda fa, kk=kk, vv=vv, extra=extra: fa.flash_attn_with_kvcache(
                        q, kk, vv, cache_seqlens=seqlens, **extra), ref, kv_bytes,
                    {"cache": cache, "batch": batch, "layout": layout})
                summary.append((f"{cache} b{batch} {layout}", med))
            print_sdpa_rows(cache, batch, qt, kt, vt, ref, kv_bytes)
        del k, v
    print_medians(summary, names, "cache batch layout")


if __name__ == "__main__":
    main()
