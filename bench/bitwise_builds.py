"""Bitwise comparison of side-by-side builds (bench/sm90_device_common.sh sm90_build_py: packages flashattn_NAME)
for the device scripts of bench/integration: the same call on every build, each output (and the LSE, where the call
returns a tuple) compared bit for bit with the first build's.

    from bitwise_builds import same
    same("non-causal 2k", lambda m: m.flash_attn_func(q, k, v), [flashattn_base, flashattn_new])
"""
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
