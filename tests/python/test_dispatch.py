"""Eager calls skip the torch.library dispatcher only when it has nothing to do.

flashattn._ops.call runs an op's implementation directly in plain eager inference (the
dispatcher costs more host time than a decode kernel); anything that needs the dispatcher
(autograd, a dispatch mode, tracing) must still see the op.
"""

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


def _qkv(device, requires_grad=False):
    q = torch.randn(2, 5, 4, 64, device=device, dtype=torch.bfloat16, requires_grad=requires_grad)
    k = torch.randn(2, 7, 2, 64, device=device, dtype=torch.bfloat16)
    v = torch.randn(2, 7, 2, 64, device=device, dtype=torch.bfloat16)
    return q, k, v


def test_eager_inference_calls_the_implementation(device, direct_calls):
    q, k, v = _qkv(device)
    direct = flashattn.flash_attn_func(q, k, v, causal=True)
    assert direct_calls.get(_ops.fwd) == 1
    via_op = _ops.fwd(q, k, v, None, True, -1, -1, 0.0, None, 0.0, None, False)[0]
    assert direct_calls.get(_ops.fwd) == 1  # the op itself never goes through the shortcut
    assert torch.equal(direct, via_op)


def test_gradients_go_through_the_op(device, direct_calls):
    q, k, v = _qkv(device, requires_grad=True)
    out = flashattn.flash_attn_func(q, k, v)
    assert _ops.fwd not in direct_calls
    assert out.grad_fn is not None
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()
    with torch.no_grad():
        flashattn.flash_attn_func(q, k, v)
    assert direct_calls.get(_ops.fwd) == 1


def test_dispatch_modes_see_the_op(device, direct_calls):
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    q, k, v = _qkv(device)
    with Recorder():
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
