# Markdown tables of helper sm90k's same-process A/B rows (bench/sm90k_run{1,2}.sh, bench/sm90s_ab.py;
# TFLOP/s, two passes with the build order reversed): per row each pass and their mean, the ratios of
# every build to BASE and of BASE to the control, and each build against cuDNN.
#   python3 bench/sm90k_table.py bench/sm90k_run2_ab.jsonl --base base --builds new,w768,tree
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--base", default="base")
    ap.add_argument("--builds", default="k64")
    ap.add_argument("--ctrl", default="ctrl")
    ap.add_argument("--means", action="store_true", help="one line per row: the means, each pass's ratios in ()")
    args = ap.parse_args()
    builds = args.builds.split(",")
    rows = [json.loads(line) for line in open(args.jsonl) if '"hdim"' in line]
    by = collections.defaultdict(dict)
    for r in rows:
        by[(r["causal"], r["seqlen"])][r["pass"]] = r
    cols = [args.base] + builds + [args.ctrl, "cudnn"]
    head = ["causal", "s", "pass"] + cols + [f"{b}/{args.base}" for b in builds] + [f"{args.base}/{args.ctrl}"]
    head += [f"{b}/cuDNN" for b in [args.base] + builds]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (causal, s), passes in sorted(by.items()):
        lines = sorted(passes.items())
        mean = {k: sum(r[k] for _, r in lines) / len(lines) for k in cols}
        if args.means:
            ratio = lambda a, b: f"{mean[a] / mean[b]:.3f} (" + ", ".join(f"{r[a] / r[b]:.3f}" for _, r in lines) + ")"
            cells = ["yes" if causal else "no", str(s), "mean"] + [f"{mean[k]:.1f}" for k in cols]
            cells += [ratio(b, args.base) for b in builds] + [ratio(args.base, args.ctrl)]
            cells += [f"{mean[b] / mean['cudnn']:.2f}" for b in [args.base] + builds]
            print("| " + " | ".join(cells) + " |")
            continue
        for name, r in lines + [("mean", mean)]:
            cells = ["yes" if causal else "no", str(s), name] + [f"{r[k]:.1f}" for k in cols]
            cells += [f"{r[b] / r[args.base]:.3f}" for b in builds] + [f"{r[args.base] / r[args.ctrl]:.3f}"]
            cells += [f"{r[b] / r['cudnn']:.2f}" for b in [args.base] + builds]
            if name == "mean":
                cells = [f"**{c}**" if i >= 2 else c for i, c in enumerate(cells)]
            print("| " + " | ".join(cells) + " |")
    differing = [(r["causal"], r["seqlen"], r["pass"]) for r in rows if len(set(r["err"].values())) > 1]
    print(f"\n{len(rows)} rows; max |out - cuDNN| differs between builds on: {differing or 'none'}")


if __name__ == "__main__":
    main()
