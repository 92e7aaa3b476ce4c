"""Eager calls skip the torch.library dispatcher only when it has nothing to do.

flashattn._ops.call runs an op's implementation directly in plain eager calls (the dispatcher
costs more host time than a decode kernel), under a torch.autograd.Function of the op's own
formula when a gradient is to be recorded; anything else that needs the dispatcher (a dispatch
mode, tracing, a tensor subclass) must still see the op.
"""

import inspect

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import flashattn
from flashattn import _ops


@pytest.fixture
def direct_calls(monkeypatch):
    """Counts the calls that go straight to an implementation, per op."""
    counts = {}
    for op, (fn, mutated) in list(_ops._IMPLEMENTATIONS.items()):

        def spy(*args, _fn=fn, _op=op):
            counts[_op] = counts.get(_op, 0) + 1
            return _fn(*args)

        monkeypatch.setitem(_ops._IMPLEMENTATIONS, op, (spy, mutated))
    return counts


class Recorder(TorchDispatchMode):
    """Records the name of every op dispatched under it into `seen`."""

    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def _qkv(device, requires_grad=False):
    q = torch.randn(2, 5, 4, 64, device=device, dtype=torch.bfloat16, requires_grad=requires_grad)
    k = torch.randn(2, 7, 2, 64, device=device, dtype=torch.bfloat16)
    v = torch.randn(2, 7, 2, 64, device=device, dtype=torch.bfloat16)
    return q, k, v


def test_eager_inference_calls_the_implementation(device, direct_calls):
    q, k, v = _qkv(device)
    direct = flashattn.flash_attn_func(q, k, v, causal=True)
    assert direct_calls.get(_ops.fwd) == 1
    via_op = _ops.fwd(q, k, v, None, True, -1, -1, 0.0, None, 0.0, None, False, 0)[0]
    assert direct_calls.get(_ops.fwd) == 1  # the op itself never goes through the shortcut
    assert torch.equal(direct, via_op)


def _grads(q, k, v, sink, dout):
    out = flashattn.flash_attn_func(q, k, v, causal=True, deterministic=True, learnable_sink=sink)
    out.backward(dout)
    grads = (out.detach(), q.grad, k.grad, v.grad, sink.grad)
    q.grad = k.grad = v.grad = sink.grad = None
    return out.grad_fn, grads


def test_eager_gradients_take_the_autograd_function(device, direct_calls, monkeypatch):
    """With inputs that need a gradient (and nothing else for the dispatcher), eager calls run the op's own
    formula under a torch.autograd.Function: the implementations are called directly, forward and backward,
    and every result is bitwise the op's (deterministic backward)."""
    q, k, v = _qkv(device, requires_grad=True)
    k.requires_grad_()
    v.requires_grad_()
    sink = torch.nn.Parameter(torch.randn(4, device=device))  # a Parameter, as a learnable sink usually is
    dout = torch.randn(2, 5, 4, 64, device=device, dtype=torch.bfloat16)
    grad_fn, direct = _grads(q, k, v, sink, dout)
    assert direct_calls.get(_ops.fwd) == 1 and direct_calls.get(_ops.bwd) == 1
    assert "FlashAttn_fwd" in type(grad_fn).__name__
    monkeypatch.setattr(_ops, "_AUTOGRAD_FUNCTIONS", {})  # as before: through the op's autograd wrapper
    grad_fn, via_op = _grads(q, k, v, sink, dout)
    assert direct_calls.get(_ops.fwd) == 1  # the op ran its implementation itself
    assert "FlashAttn_fwd" not in type(grad_fn).__name__
    for name, a, b in zip(("out", "dq", "dk", "dv", "dsink"), direct, via_op):
        assert a is not None and torch.isfinite(a).all(), name
        assert torch.equal(a, b), name


def test_eager_varlen_gradients_take_the_autograd_function(device, direct_calls):
    q = torch.randn(12, 4, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(15, 2, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(15, 2, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    cu_q = torch.tensor([0, 5, 12], device=device, dtype=torch.int32)
    cu_k = torch.tensor([0, 7, 15], device=device, dtype=torch.int32)
    out = flashattn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 7, 8, causal=True)
    assert "FlashAttn_varlen_fwd" in type(out.grad_fn).__name__
    out.sum().backward()
    assert direct_calls.get(_ops.varlen_fwd) == 1 and direct_calls.get(_ops.varlen_bwd) == 1
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in (q, k, v))


def test_gradients_under_a_dispatch_mode_go_through_the_op(device, direct_calls):
    seen = []
    q, k, v = _qkv(device, requires_grad=True)
    with Recorder(seen):
        out = flashattn.flash_attn_func(q, k, v)
    assert _ops.fwd not in direct_calls
    assert any("flashattn.fwd" in name for name in seen), seen
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    with torch.no_grad():
        flashattn.flash_attn_func(q, k, v)
    assert direct_calls.get(_ops.fwd) == 1


def test_dispatch_modes_see_the_op(device, direct_calls):
    seen = []
    q, k, v = _qkv(device)
    with Recorder(seen):
        flashattn.flash_attn_func(q, k, v)
    assert _ops.fwd not in direct_calls
    assert any("flashattn.fwd" in name for name in seen), seen


def test_direct_append_marks_the_cache_written(device, direct_calls):
    k_cache = torch.randn(2, 16, 2, 64, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn_like(k_cache)
    q, k_new, v_new = _qkv(device)
    k_new, v_new = k_new[:, :3], v_new[:, :3]
    seqlens = torch.tensor([4, 9], device=device, dtype=torch.int32)
    versions = (k_cache._version, v_cache._version)
    flashattn.flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens, causal=True)
    assert direct_calls.get(_ops.fwd_kvcache_append) == 1
    # Autograd's in-place checks rely on the version counter, as when the op declares the mutation.
    assert (k_cache._version, v_cache._version) == (versions[0] + 1, versions[1] + 1)
    torch.testing.assert_close(k_cache[0, 4:7], k_new[0], rtol=0, atol=0)
    torch.testing.assert_close(v_cache[1, 9:12], v_new[1], rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore:`torch.jit.trace` is deprecated:FutureWarning")
def test_jit_trace_records_the_op(device, direct_calls):
    """torch.jit.trace sees only dispatched ops: a call that skipped the dispatcher would be missing from the
    trace, whose replay would then return the outputs' uninitialised memory."""
    q, k, v = _qkv(device)

    def attention(q, k, v):
        return flashattn.flash_attn_func(q, k, v, causal=True)

    with torch.no_grad():
        traced = torch.jit.trace(attention, (q, k, v), check_trace=False)
    assert _ops.fwd not in direct_calls
    assert any(node.kind() == "flashattn::fwd" for node in traced.graph.nodes())
    fresh = torch.randn_like(q)
    with torch.no_grad():
        assert torch.equal(traced(fresh, k, v), attention(fresh, k, v))


class _Subclass(torch.Tensor):
    """A tensor subclass: its __torch_function__ / dispatch overrides need the op."""


def test_the_route_reads_every_tensor_parameter():
    """The route looks only at the positions of an op's tensor parameters (it runs on every call): a gradient
    or a subclass at any of them must take it off the direct path."""
    names = {op: list(inspect.signature(fn).parameters) for op, (fn, _) in _ops._IMPLEMENTATIONS.items()}
    tensors = {op: {names[op][i] for i in positions} for op, positions in _ops._TENSOR_POSITIONS.items()}
    assert tensors[_ops.fwd] == {"q", "k", "v", "alibi_slopes", "sink", "attn_bias"}
    assert tensors[_ops.bwd] == {"dout", "q", "k", "v", "out", "lse", "alibi_slopes", "rng_state", "sink",
                                 "attn_bias"}
    assert tensors[_ops.combine] == {"out_partial", "lse_partial"}
    for op, positions in _ops._TENSOR_POSITIONS.items():
        for i in positions:
            args = [None] * len(names[op])
            args[i] = torch.randn(3, requires_grad=True)
            with torch.enable_grad():
                assert _ops._route(op, tuple(args)) != _ops._DIRECT, (op, names[op][i])
            with torch.no_grad():
                assert _ops._route(op, tuple(args)) == _ops._DIRECT, (op, names[op][i])
            args[i] = torch.randn(3).as_subclass(_Subclass)
            assert _ops._route(op, tuple(args)) == _ops._OP, (op, names[op][i])
