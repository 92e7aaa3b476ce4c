"""torch.compile(fullgraph=True) traces the ops without graph breaks; CUDA graphs capture them."""

import pytest
import torch

import flashattn
from conftest import requires_cuda


class Block(torch.nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, s, dim = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, dim // self.heads)
        out = flashattn.flash_attn_qkvpacked_func(qkv, causal=True)
        return self.proj(out.reshape(b, s, dim))


@pytest.mark.parametrize("backend", ["aot_eager"])
def test_compile_fullgraph_forward_backward(device, backend):
    torch.manual_seed(0)
    block = Block().to(device=device, dtype=torch.bfloat16)
    x = torch.randn(2, 24, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    eager = block(x)
    (gx_eager,) = torch.autograd.grad(eager.sum(), x)
    compiled = torch.compile(block, fullgraph=True, backend=backend)
    got = compiled(x)
    (gx,) = torch.autograd.grad(got.sum(), x)
    assert torch.equal(got, eager)
    assert torch.equal(gx, gx_eager)


def test_compile_attn_bias_forward_backward(device):
    """attn_bias (a bool key-padding mask) through torch.compile(fullgraph=True): the op's schema and fake
    implementation take it, and the compiled forward and gradients equal eager's."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 24, 4, 32, device=device, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    mask = torch.ones(2, 1, 1, 24, dtype=torch.bool, device=device)
    mask[1, ..., 17:] = False

    def f(q, k, v, mask):
        return flashattn.flash_attn_func(q, k, v, causal=True, attn_bias=mask)

    eager = f(q, k, v, mask)
    grads_eager = torch.autograd.grad(eager.sum(), (q, k, v))
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(q, k, v, mask)
    grads = torch.autograd.grad(got.sum(), (q, k, v))
    assert torch.equal(got, eager)
    for g, ge in zip(grads, grads_eager):
        assert torch.equal(g, ge)


def test_compile_varlen_dynamic_max_seqlen(device):
    torch._dynamo.reset()
    counter = {"n": 0}

    def backend(gm, example_inputs):
        counter["n"] += 1
        return gm.forward

    def f(q, k, v, cu, max_seqlen):
        return flashattn.flash_attn_varlen_func(q, k, v, cu, cu, max_seqlen, max_seqlen, causal=True)

    compiled = torch.compile(f, fullgraph=True, backend=backend)
    q = torch.randn(30, 2, 32, device=device, dtype=torch.float16)
    for lens in ([10, 20], [5, 25], [29, 1]):
        cu = torch.tensor([0, lens[0], 30], dtype=torch.int32, device=device)
        max_seqlen = torch.tensor(max(lens), device=device)  # a tensor: never read on the host
        got = compiled(q, q, q, cu, max_seqlen)
        assert torch.equal(got, f(q, q, q, cu, max(lens)))
    assert counter["n"] == 1, "a max_seqlen tensor must not cause recompilation"


def test_compile_kvcache_append(device):
    def step(q, kc, vc, k, v, seqlens):
        return flashattn.flash_attn_with_kvcache(q, kc, vc, k=k, v=v, cache_seqlens=seqlens, causal=True)

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    kc = torch.zeros(2, 16, 2, 32, device=device, dtype=torch.float16)
    vc = torch.zeros_like(kc)
    kc2, vc2 = kc.clone(), vc.clone()
    q = torch.randn(2, 1, 2, 32, device=device, dtype=torch.float16)
    k = torch.randn(2, 1, 2, 32, device=device, dtype=torch.float16)
    v = torch.randn_like(k)
    seqlens = torch.tensor([3, 7], dtype=torch.int32, device=device)
    got = compiled(q, kc, vc, k, v, seqlens)
    want = step(q, kc2, vc2, k, v, seqlens)
    assert torch.equal(got, want)
    assert torch.equal(kc, kc2) and torch.equal(vc, vc2), "the in-place cache write must survive compilation"


@requires_cuda
def test_cuda_graph_capture_and_replay():
    device = torch.device("cuda")
    q = torch.randn(2, 128, 4, 64, device=device, dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    lens = [100, 28]
    qv = q.reshape(-1, 4, 64)[:128]
    cu = torch.tensor([0, 100, 128], dtype=torch.int32, device=device)
    max_seqlen = torch.tensor(100, device=device)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside capture
        for _ in range(2):
            flashattn.flash_attn_func(q, k, v, causal=True)
            flashattn.flash_attn_varlen_func(qv, qv, qv, cu, cu, max_seqlen, max_seqlen)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = flashattn.flash_attn_func(q, k, v, causal=True)
        out_varlen = flashattn.flash_attn_varlen_func(qv, qv, qv, cu, cu, max_seqlen, max_seqlen)
    for _ in range(2):
        q.copy_(torch.randn_like(q))
        cu.copy_(torch.tensor([0, lens[0] - 37, 128], dtype=torch.int32, device=device))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, flashattn.flash_attn_func(q, k, v, causal=True))
        assert torch.equal(out_varlen, flashattn.flash_attn_varlen_func(qv, qv, qv, cu, cu, 128, 128))


@requires_cuda
def test_runs_on_the_inputs_device_and_current_stream():
    count = torch.cuda.device_count()
    device = torch.device("cuda", count - 1)
    q = torch.randn(1, 64, 2, 64, device=device, dtype=torch.float16)
    stream = torch.cuda.Stream(device=device)
    with torch.cuda.stream(stream):
        out = flashattn.flash_attn_func(q, q, q)
    stream.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), q.transpose(1, 2),
                                                           q.transpose(1, 2)).transpose(1, 2)
    assert out.device == device
    assert (out - ref).abs().max().item() < 1e-2


@requires_cuda
def test_cuda_graphed_training_step():
    """torch.cuda.make_graphed_callables captures the forward and the backward (the autograd.Function's Python
    backward included, which is what removes the eager step's host time): replays on fresh inputs give the eager
    call's output and gradients, bitwise (deterministic backward)."""
    device = torch.device("cuda")
    torch.manual_seed(0)
    shape = (2, 96, 4, 64)

    def attention(q, k, v):
        return flashattn.flash_attn_func(q, k, v, causal=True, deterministic=True)

    def fresh():
        return tuple(torch.randn(shape, device=device, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))

    graphed = torch.cuda.make_graphed_callables(attention, fresh())
    for _ in range(2):
        q, k, v = fresh()
        dout = torch.randn(shape, device=device, dtype=torch.bfloat16)
        out = graphed(q, k, v)
        out.backward(dout)
        replayed = (out.detach().clone(), q.grad.clone(), k.grad.clone(), v.grad.clone())
        q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
        eager = attention(q2, k2, v2)
        eager.backward(dout)
        for name, a, b in zip(("out", "dq", "dk", "dv"), replayed, (eager.detach(), q2.grad, k2.grad, v2.grad)):
            assert torch.isfinite(a).all(), name
            assert torch.equal(a, b), name
