"""Eager forward + backward steps of flash_attn_func beside PyTorch SDPA's backends, from host-bound to GPU-bound
sizes (GPU).

A step: the attention forward on inputs that need a gradient (q, k, v), then backward with one preallocated
output gradient. Per case and implementation:
  step_us   wall time of N back-to-back steps until the GPU has finished them, over N (what a training loop sees);
  host_us   wall time of N steps until the last one is queued, over N (the host's share: the Python, the
            autograd engine, the launches);
  event_us  the median CUDA-event span around one step begun on an idle GPU (the kernels' time where the host
            keeps ahead; for host-bound steps it includes the host's time to queue the step; the session 43
            record bench/integration/s43_steps.jsonl names it gpu_us);
  tflops    forward + backward FLOPs (3.5x the forward's 4 b h s^2 d, halved when causal) over step_us.
Rounds interleave the implementations (default 3 rounds; medians reported). Each implementation's output
and dq are compared with SDPA's default choice (max abs difference, bf16).
Run: python3 bench/training_step.py [--rounds 3] [--target-ms 150]
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashattn

# (d, h, b, s, causal)
SHAPES = [
    (128, 16, 8, 256, False),
    (128, 16, 4, 1024, False),
    (128, 16, 4, 1024, True),
    (128, 16, 2, 4096, False),
    (128, 16, 2, 4096, True),
    (128, 16, 1, 16384, False),
    (64, 32, 8, 512, False),
    (64, 32, 2, 4096, True),
    (256, 8, 2, 4096, True),
    (256, 8, 2, 4096, False),
    (256, 8, 1, 16384, True),
]


def timed_steps(step, calls):
    """(wall time until queued, wall time until done), per call, in us."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        step()
    queued = time.perf_counter()
    torch.cuda.synchronize()
    done = time.perf_counter()
    return (queued - start) / calls * 1e6, (done - start) / calls * 1e6


def event_us(step, samples=15):
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    readings = []
    for _ in range(samples):
        torch.cuda.synchronize()
        begin.record()
        step()
        end.record()
        end.synchronize()
        readings.append(begin.elapsed_time(end) * 1e3)
    return statistics.median(readings)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target-ms", type=float, default=150.0)
    parser.add_argument("--dims", default=None, help="only the shapes of these head dims (e.g. 256)")
    args = parser.parse_args()
    dims = None if args.dims is None else {int(x) for x in args.dims.split(",")}
    torch.manual_seed(0)
    dt = torch.bfloat16
    for d, h, b, s, causal in SHAPES:
        if dims is not None and d not in dims:
            continue
        q = torch.randn(b, s, h, d, device="cuda", dtype=dt, requires_grad=True)
        k = torch.randn(b, s, h, d, device="cuda", dtype=dt, requires_grad=True)
        v = torch.randn(b, s, h, d, device="cuda", dtype=dt, requires_grad=True)
        dout = torch.randn(b, s, h, d, device="cuda", dtype=dt)
        # SDPA's own layout (b, h, s, d), contiguous: its natural input.
        qs, ks, vs = (t.detach().transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
        dout_s = dout.transpose(1, 2).contiguous()

        def ours():
            flashattn.flash_attn_func(q, k, v, causal=causal).backward(dout)

        def sdpa(backend=None):
            def step():
                if backend is None:
                    F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(dout_s)
                else:
                    with sdpa_kernel([backend]):
                        F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(dout_s)
            return step

        # The same steps captured as CUDA graphs (torch.cuda.make_graphed_callables: forward and backward
        # replayed, the inputs copied into the graphs' own).
        graphed_ours = torch.cuda.make_graphed_callables(
            lambda q_, k_, v_: flashattn.flash_attn_func(q_, k_, v_, causal=causal), (q, k, v))
        graphed_sdpa = torch.cuda.make_graphed_callables(
            lambda q_, k_, v_: F.scaled_dot_product_attention(q_, k_, v_, is_causal=causal), (qs, ks, vs))

        impls = {"flashattn": ours, "sdpa_default": sdpa(), "sdpa_flash": sdpa(SDPBackend.FLASH_ATTENTION),
                 "sdpa_cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
                 "flashattn_graphed": lambda: graphed_ours(q, k, v).backward(dout),
                 "sdpa_default_graphed": lambda: graphed_sdpa(qs, ks, vs).backward(dout_s)}
        # Each implementation's output and dq beside SDPA's default choice.
        check = {}
        for name, _ in impls.items():
            for t in (q, k, v, qs, ks, vs):
                t.grad = None
            try:
                if name.startswith("flashattn"):
                    out = (graphed_ours if name.endswith("graphed") else
                           lambda q_, k_, v_: flashattn.flash_attn_func(q_, k_, v_, causal=causal))(q, k, v)
                    out.backward(dout)
                    check[name] = (out.detach().float(), q.grad.float())
                elif name.endswith("graphed"):
                    out = graphed_sdpa(qs, ks, vs)
                    out.backward(dout_s)
                    check[name] = (out.detach().transpose(1, 2).float(), qs.grad.transpose(1, 2).float())
                else:
                    backend = {"sdpa_flash": SDPBackend.FLASH_ATTENTION, "sdpa_cudnn": SDPBackend.CUDNN_ATTENTION}
                    ctx = sdpa_kernel([backend[name]]) if name in backend else torch.enable_grad()
                    with ctx:
                        out = F.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
                    out.backward(dout_s)
                    check[name] = (out.detach().transpose(1, 2).float(), qs.grad.transpose(1, 2).float())
            except RuntimeError as error:  # a backend that cannot run this shape
                check[name] = str(error).splitlines()[0]
        available = {name: fn for name, fn in impls.items() if not isinstance(check[name], str)}
        flop = 4 * b * h * s * s * d // (2 if causal else 1) * 3.5
        readings = {name: {"host_us": [], "step_us": [], "event_us": []} for name in available}
        calls = {}
        for name, fn in available.items():
            for _ in range(3):
                fn()
            one = event_us(fn, 3)
            calls[name] = max(5, min(500, int(args.target_ms * 1e3 / max(one, 1.0))))
        for round_ in range(args.rounds):
            names = list(available) if round_ % 2 == 0 else list(reversed(available))
            for name in names:
                host, step = timed_steps(available[name], calls[name])
                readings[name]["host_us"].append(host)
                readings[name]["step_us"].append(step)
                readings[name]["event_us"].append(event_us(available[name]))
        reference = check.get("sdpa_default")
        for name in impls:
            row = {"d": d, "h": h, "b": b, "s": s, "causal": causal, "impl": name}
            if isinstance(check[name], str):
                row["error"] = check[name]
            else:
                for key, values in readings[name].items():
                    row[key] = round(statistics.median(values), 1)
                row["tflops"] = round(flop / row["step_us"] / 1e6, 1)
                if not isinstance(reference, str):
                    row["max_diff_out"] = round((check[name][0] - reference[0]).abs().max().item(), 4)
                    row["max_diff_dq"] = round((check[name][1] - reference[1]).abs().max().item(), 4)
            print(json.dumps(row), flush=True)
        del q, k, v, qs, ks, vs, dout, dout_s, check, graphed_ours, graphed_sdpa
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
