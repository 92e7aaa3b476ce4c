"""Bitwise comparison of side-by-side builds (bench/sm90_device_common.sh sm90_build_py: packages flashattn_NAME)
for the device scripts of bench/integration: the same call on every build, each output (and the LSE, where the call
returns a tuple) compared bit for bit with the first build's.

    from bitwise_builds import same
    same("non-causal 2k", lambda m: m.flash_attn_func(q, k, v), [flashattn_base, flashattn_new])

Or from a script, over random bf16 inputs (fresh per shape; SHAPE is BATCHxSEQLEN_QxSEQLEN_K[xHEADS], ":c" causal):

    PYTHONPATH=$bld/pyroot:bench python3 bench/bitwise_builds.py --builds base,new --head-dim 256 4x4096x4096:c
    ... --max-diff   (builds whose outputs may differ: the largest |difference| from the first build's output)
"""
import argparse
import importlib

import torch


def same(name, call, modules):
    """Prints `name: NEW bitwise equal True, ..., finite True` for each module after the first."""
    outs = []
    for m in modules:
        x = call(m)
        outs.append(x if isinstance(x, tuple) else (x,))
    equal = [all(bool(torch.equal(a, b)) for a, b in zip(outs[0], o)) for o in outs[1:]]
    finite = all(bool(torch.isfinite(o[0]).all()) for o in outs)
    names = [m.__name__.removeprefix("flashattn_") for m in modules[1:]]
    print(f"{name}: " + ", ".join(f"{n} bitwise equal {e}" for n, e in zip(names, equal)) + f", finite {finite}")


def max_diff(name, call, modules):
    """Prints `name: NEW max |y - FIRST| D, finite True` for each module after the first (outputs only)."""
    outs = [call(m) for m in modules]
    outs = [o[0] if isinstance(o, tuple) else o for o in outs]
    first = modules[0].__name__.removeprefix("flashattn_")
    parts = [f"{m.__name__.removeprefix('flashattn_')} max |y - {first}| "
             f"{(outs[0].float() - o.float()).abs().max().item():.3g}" for m, o in zip(modules[1:], outs[1:])]
    print(f"{name}: " + ", ".join(parts) + f", finite {all(bool(torch.isfinite(o).all()) for o in outs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", required=True, help="comma-separated build names (packages flashattn_NAME)")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--max-diff", action="store_true", help="the largest difference instead of bit equality")
    ap.add_argument("shapes", nargs="+", help="BATCHxSEQLEN_QxSEQLEN_K[xHEADS][:c] (heads 8 by default)")
    args = ap.parse_args()
    modules = [importlib.import_module(f"flashattn_{b}") for b in args.builds.split(",")]
    torch.manual_seed(0)
    for shape in args.shapes:
        dims, _, flags = shape.partition(":")
        b, sq, sk, *h = (int(x) for x in dims.split("x"))
        heads, causal = (h[0] if h else 8), flags == "c"

        def r(s):
            return torch.randn(b, s, heads, args.head_dim, device="cuda", dtype=torch.bfloat16)

        q, k, v = r(sq), r(sk), r(sk)
        name = f"b{b} h{heads} {sq}x{sk} causal {causal}"
        if args.max_diff:
            max_diff(name, lambda m: m.flash_attn_func(q, k, v, causal=causal), modules)
        else:
            same(name, lambda m: m.flash_attn_func(q, k, v, causal=causal, return_lse=True), modules)


if __name__ == "__main__":
    main()
