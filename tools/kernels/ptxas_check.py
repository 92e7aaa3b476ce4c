#!/usr/bin/env python3
"""Compiles CUDA translation units to cubins with ptxas -v (in parallel) and fails when ptxas serialised a kernel's
wgmma pipeline (C7510-C7518, resource_usage.SERIALISED): a change that makes every wgmma wait for the previous one
costs a Hopper kernel a large part of its speed, yet ptxas reports it as an info line of a verbose build only.
Also reports each kernel's registers and spills. Registered as the ctest sm90_wgmma_pipelines (tests/CMakeLists.txt)
over the build's sm90 forward translation units.

  ptxas_check.py --nvcc NVCC --arch sm_90a [--flags "-I.. -D.."] [--jobs N] SOURCE...
"""
import argparse, concurrent.futures, os, pathlib, shlex, subprocess, sys, tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from resource_usage import demangle, from_ptxas  # noqa: E402


def compile_one(nvcc, arch, flags, source, work):
    log = pathlib.Path(work) / (pathlib.Path(source).name + ".ptxas.txt")
    cmd = [nvcc, "-O3", "-DNDEBUG", "-std=c++20", f"-gencode=arch=compute_{arch[3:]},code={arch}", "-Xptxas=-v",
           "-cubin", "-o", str(log.with_suffix(".cubin")), *flags, source]
    r = subprocess.run(cmd, capture_output=True, text=True)
    log.write_text(r.stdout + r.stderr)
    return source, r.returncode, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--flags", default="", help="further nvcc arguments, one string (include dirs, definitions)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("sources", nargs="+")
    args = ap.parse_args()
    flags = shlex.split(args.flags)
    failed = False
    with tempfile.TemporaryDirectory() as work, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda s: compile_one(args.nvcc, args.arch, flags, s, work), args.sources))
        for source, rc, log in results:
            if rc != 0:
                print(f"FAIL {source}: nvcc exit {rc}\n{log.read_text()[-4000:]}")
                failed = True
                continue
            rows = from_ptxas(log)
            names = demangle([name for name, _ in rows])
            print(f"{pathlib.Path(source).name}: {len(rows)} kernels")
            for (name, _), r in sorted(rows.items(), key=lambda kv: names[kv[0][0]]):
                short = names[name].split("(")[0][-120:]
                line = (f"  registers {r.get('registers', '?')} "
                        f"spills {r.get('spill_stores', 0)}/{r.get('spill_loads', 0)} B")
                if r.get("wgmma_serialised"):
                    failed = True
                    print(f"FAIL wgmma serialised: {short}\n{line}\n    " + "\n    ".join(r["wgmma_serialised"]))
                else:
                    print(f"  ok {short}\n{line}")
    print("FAILED" if failed else "every kernel keeps its wgmma pipeline")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
