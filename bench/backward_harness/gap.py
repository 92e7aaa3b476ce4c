# bwd7: the harness gap. Per row, in one process: our backward through the Python package (compare.py's
# measure) and FA2 (SDPA FLASH_ATTENTION) on compare.py's layout ((b, s, h, d) tensors, SDPA given
# transposed views) and on fa2_bwd.py's layout ((b, h, s, d) contiguous tensors), ours on the latter too.
# Then torch.profiler kernel lists of one backward of each at d128 s512.
import sys, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench
import flashattn

rows = [(64, 0, 512), (64, 0, 2048), (64, 0, 16384), (64, 1, 512), (128, 0, 512), (128, 0, 1024),
        (128, 0, 2048), (128, 0, 16384), (128, 1, 512), (256, 0, 512), (256, 0, 2048), (256, 0, 16384),
        (256, 1, 512)]


def ours(q, k, v, causal):
    return flashattn.flash_attn_func(q, k, v, causal=causal)


def fa2(q, k, v, causal):
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def make(d, s, layout):
    b, h = 16384 // s, 2048 // d
    shape = (b, s, h, d) if layout == "bshd" else (b, h, s, d)
    q = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn_like(q, requires_grad=True)
    v = torch.randn_like(q, requires_grad=True)
    return q, k, v


def case(fn, q, k, v, causal, layout):
    # fn takes (b, s, h, d) views for ours, (b, h, s, d) views for SDPA.
    ours_side = fn is ours
    if (layout == "bshd") == ours_side:
        out = fn(q, k, v, causal)
    else:
        out = fn(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal)
    g = torch.randn_like(out)
    run = lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
    run()
    torch.cuda.synchronize()
    return run


if sys.argv[1:2] == ["prof"]:
    from torch.profiler import profile, ProfilerActivity
    for d, s in ((64, 512), (128, 512), (256, 2048)):
        for name, fn, layout in (("ours_bshd", ours, "bshd"), ("fa2_bshd", fa2, "bshd")):
            q, k, v = make(d, s, layout)
            run = case(fn, q, k, v, False, layout)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(3):
                    run()
                torch.cuda.synchronize()
            print(f"=== {name} d={d} s={s} causal=0 (3 backward calls)")
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=90))
    sys.exit(0)

for d, causal, s in rows:
    b, h = 16384 // s, 2048 // d
    flop = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
    res = {}
    for name, fn, layout in (("ours_bshd", ours, "bshd"), ("fa2_bshd", fa2, "bshd"), ("fa2_bhsd", fa2, "bhsd"),
                             ("ours_bhsd", ours, "bhsd")):
        torch.manual_seed(s + d)
        q, k, v = make(d, s, layout)
        ms = do_bench(case(fn, q, k, v, bool(causal), layout), warmup=25, rep=100, return_mode="median")
        res[name] = (ms, flop / ms / 1e9)
        del q, k, v
    print(f"gap d={d} causal={causal} s={s} " + " ".join(f"{n}={ms:.3f}ms/{tf:.1f}" for n, (ms, tf) in res.items())
          + f" ours/fa2 bshd={res['ours_bshd'][1] / res['fa2_bshd'][1]:.2f} bhsd={res['ours_bhsd'][1] / res['fa2_bhsd'][1]:.2f}"
          + f" fa2 bhsd-bshd={res['fa2_bhsd'][0] - res['fa2_bshd'][0]:.3f}ms", flush=True)
