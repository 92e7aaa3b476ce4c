#!/usr/bin/env python3
"""Sweeps candidate tile shapes of the cuda_sm80 forward kernel on the GPU of
this machine and writes the winners into the checked-in table
src/cuda/sm80/forward_tuning.json, which src/cuda/generate_kernels.py reads.

  tune_forward.py [--head-dims 64;128;256] [--seqlens 1024,4096,16384]
                  [--candidates tools/kernels/forward_candidates.json]
                  [--build DIR] [--table src/cuda/sm80/forward_tuning.json] [--dry-run]

Builds bench/sm80_tune.cu with every candidate compiled in (one translation
unit per candidate, nvcc in parallel), times each on the standard grid (16k
tokens, hidden 2048, bf16; causal and not), rejects candidates whose output
differs from the current table's kernel, and picks per (head dim, causal) the
shape with the best geometric mean TFLOP/s over the seqlens (plain problems, the
backend's tile order). bf16 winners serve fp16 too (generate_kernels.py falls back
to the other dtype's entry); the harness times the fp16 table kernels beside the
bf16 ones to check that, and the softcap/ALiBi/dropout kernels at one seqlen.
Raw rows go to BUILD/tune_rows.jsonl.
"""
import argparse
import concurrent.futures
import datetime
import json
import math
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOLERANCE = 2e-2  # max |candidate - table kernel| on bf16 outputs of magnitude <= 1


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def compute_capability():
    out = sh(["nvidia-smi", "--query-gpu=compute_cap,name,driver_version", "--format=csv,noheader"]).splitlines()[0]
    cap, name, driver = [x.strip() for x in out.split(",")]
    return cap.replace(".", ""), name, driver


def build(args, arch):
    out = pathlib.Path(args.build)
    (out / "gen").mkdir(parents=True, exist_ok=True)
    (out / "obj").mkdir(exist_ok=True)
    sources = sh([sys.executable, str(ROOT / "src/cuda/generate_kernels.py"), "--out", str(out / "gen"),
                  "--head-dims", args.head_dims, "--dtypes", args.dtypes, "--candidate-dtypes", "bf16",
                  "--table", args.table, "--candidates", args.candidates]).split()
    sources += [str(ROOT / "src/cuda/sm80/backend.cu"), str(ROOT / "src/cuda/sm80/kvcache_kernels.cu"),
                str(ROOT / "bench/sm80_tune.cu")]
    flags = ["-std=c++20", "-O3", f"-gencode=arch=compute_{arch},code=sm_{arch}", f"-I{ROOT / 'src'}",
             f"-I{ROOT / 'include'}", f"-I{out / 'gen'}", "-DFLASHATTN_WITH_CUDA=1", "-Xptxas=-v"]

    def compile_one(src):
        obj = out / "obj" / (pathlib.Path(src).name + ".o")
        r = subprocess.run(["nvcc", *flags, "-c", src, "-o", str(obj)], text=True, capture_output=True)
        (out / "obj" / (pathlib.Path(src).name + ".ptxas.txt")).write_text(r.stderr)
        if r.returncode:
            raise SystemExit(f"nvcc failed on {src}:\n{r.stderr[-4000:]}")
        return obj

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        objs = list(pool.map(compile_one, sources))
    status = out / "obj" / "status.o"
    sh(["g++", "-std=c++20", "-O2", f"-I{ROOT / 'include'}", "-c", str(ROOT / "src/api/status.cpp"), "-o", str(status)])
    binary = out / "sm80_tune"
    sh(["nvcc", f"-gencode=arch=compute_{arch},code=sm_{arch}", *map(str, objs), str(status), "-o", str(binary)])
    return binary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--head-dims", default="64;128;256")
    ap.add_argument("--seqlens", default="1024,4096,16384")
    # bf16 alone compiles half the table kernels (diagnostic builds); the fp16 "table" rows then time 0.
    ap.add_argument("--dtypes", default="bf16;fp16", help="';'-separated table dtypes to compile")
    ap.add_argument("--candidates", default=str(ROOT / "tools/kernels/forward_candidates.json"))
    ap.add_argument("--table", default=str(ROOT / "src/cuda/sm80/forward_tuning.json"))
    ap.add_argument("--build", default=str(ROOT / "build/tune"))
    ap.add_argument("--dry-run", action="store_true", help="print the winners, leave the table alone")
    ap.add_argument("--build-only", action="store_true", help="build BUILD/sm80_tune and stop (diagnostic runs)")
    args = ap.parse_args()

    arch, gpu, driver = compute_capability()
    binary = build(args, arch)
    if args.build_only:
        print(binary)
        return
    text = sh([str(binary), args.seqlens])
    pathlib.Path(args.build, "tune_rows.jsonl").write_text(text)
    rows = [json.loads(line) for line in text.splitlines() if line.startswith("{")]

    scores = {}  # (hdim, causal, shape json) -> [tflops...]
    rejected = set()
    for r in rows:
        if not isinstance(r["shape"], dict):  # "table", "table_sync": cuda_sm80::run itself
            continue
        key = (r["hdim"], r["causal"], json.dumps(r["shape"], sort_keys=True))
        if r["error"] != "no error" or not r["max_diff"] <= TOLERANCE:
            rejected.add(key)
        # Ranked on what the backend runs: plain problems in its tile order (backend.cu's
        # heads_fastest_order: heads fastest for causal problems); other rows are only reported.
        backend_order = "heads_fastest" if r["causal"] else "m_fastest"
        if r.get("order", backend_order) == backend_order and r.get("variant", "plain") == "plain":
            scores.setdefault(key, []).append(r["tflops"])
    table = json.loads(pathlib.Path(args.table).read_text())
    entries = [e for e in table.get("entries", [])]
    for hdim in sorted({k[0] for k in scores}):
        for causal in (False, True):
            ranked = sorted(((math.exp(sum(map(math.log, v)) / len(v)), k) for k, v in scores.items()
                             if k[0] == hdim and k[1] == causal and k not in rejected and min(v) > 0), reverse=True)
            for mean, k in ranked:
                print(f"d{hdim} causal={causal}: {mean:7.1f} TFLOP/s  {k[2]}")
            if not ranked:
                print(f"d{hdim} causal={causal}: no valid candidate; table unchanged")
                continue
            mean, k = ranked[0]
            # Conditional entries ("max_seqlen_q", "general") are chosen by hand from the rows; they stay.
            entries = [e for e in entries if not (e["head_dim"] == hdim and e["causal"] == causal and e["dtype"] == "bf16"
                                                  and "max_seqlen_q" not in e and "general" not in e)]
            entries.append({"head_dim": hdim, "dtype": "bf16", "causal": causal, "shape": json.loads(k[2]),
                            "geomean_tflops": round(mean, 1), "seqlens": args.seqlens})
    entries.sort(key=lambda e: (e["head_dim"], e["dtype"], e["causal"], e.get("max_seqlen_q", 1 << 62)))
    table["entries"] = entries
    table["tuned_on"] = f"{gpu}, driver {driver}, {datetime.date.today().isoformat()}"
    for r in rows:
        if isinstance(r["shape"], dict) and (r["hdim"], r["causal"], json.dumps(r["shape"], sort_keys=True)) in rejected:
            print("rejected:", json.dumps(r))
    if args.dry_run:
        print(json.dumps(table, indent=2))
    else:
        pathlib.Path(args.table).write_text(json.dumps(table, indent=2) + "\n")
        print(f"wrote {args.table}")


if __name__ == "__main__":
    main()
