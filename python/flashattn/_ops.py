"""torch.library custom ops over the flashattn library, with fake (meta) implementations
and autograd formulas, so torch.compile(fullgraph=True) traces them without graph breaks.

Ops (namespace ``flashattn``):
  fwd, bwd                   batched attention, (b, s, h, d)
  varlen_fwd, varlen_bwd     packed variable-length sequences, (total, h, d)
  fwd_kvcache                attention over a KV cache (read only)
  fwd_kvcache_append         the same after writing new k/v into the cache in place
  combine                    merge split-KV partial results

Each forward returns the LSE it computed (always: backward needs it) and, for dropout,
the (seed, offset) pair it drew, as a CPU int64 tensor that backward reads without a sync.
"""

from __future__ import annotations

import inspect
from typing import Optional, Sequence

import torch
from torch import Tensor
from torch.utils._python_dispatch import _get_current_dispatch_mode

from . import _runtime as rt


def _options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, rng_state,
             sink, attn_bias=None) -> dict:
    options = {
        "softmax_scale": softmax_scale,
        "causal": causal,
        "window_left": window_left,
        "window_right": window_right,
        "softcap": softcap,
        "alibi_slopes": alibi_slopes,
        "dropout_p": dropout_p,
        "sink": sink,
        "attn_bias": attn_bias,
    }
    if dropout_p > 0.0 and rng_state is not None:
        seed, offset = rng_state.tolist()  # a CPU tensor: no device sync
        options["dropout_seed"] = seed
        options["dropout_offset"] = offset
    return options


def _no_rng() -> Tensor:
    return torch.zeros(2, dtype=torch.int64)


def _empty_contiguous(t: Tensor) -> Tensor:
    """An uninitialised contiguous tensor of t's shape, dtype and device (the fake implementations' strides).

    torch.empty_like takes less than half the host time of torch.empty(shape, dtype=, device=) on a
    CUDA tensor (3.1 against 7.5 us on an H200 host, bench/integration/s43_pieces.py)."""
    return torch.empty_like(t, memory_format=torch.contiguous_format)


# ----------------------------------------------------------------------------------------
# Eager calls that need nothing from the dispatcher.
#
# Going through a torch.library op costs tens of microseconds of Python per eager call (the
# autograd wrapper, the dispatcher round trip, alias checks): more than a decode step's
# kernel. When none of that machinery has work to do (no tracing by torch.compile or torch.jit, no
# dispatch mode such as FakeTensorMode or FlopCounterMode, no tensor subclass, no functorch
# transform), `call` runs the op's implementation directly, under a torch.autograd.Function of the op's
# own autograd formula when a gradient is to be recorded: the same functions the op runs, so the
# results are the same. Everything else goes through the op.

_IMPLEMENTATIONS: dict = {}  # op -> (implementation, positions of the arguments it mutates)


_TENSOR_POSITIONS: dict = {}  # op -> positions of its Tensor / Optional[Tensor] parameters


def _custom_op(name: str, mutates_args: tuple = ()):
    """torch.library.custom_op, remembering the implementation for `call`."""

    def register(fn):
        op = torch.library.custom_op(name, fn, mutates_args=mutates_args)
        parameters = list(inspect.signature(fn).parameters.values())
        names = [p.name for p in parameters]
        _IMPLEMENTATIONS[op] = (fn, tuple(names.index(m) for m in mutates_args))
        # The annotations are strings (postponed evaluation): "Tensor" or "Optional[Tensor]".
        _TENSOR_POSITIONS[op] = tuple(i for i, p in enumerate(parameters) if "Tensor" in str(p.annotation))
        return op

    return register


# Private or recent PyTorch entry points: where one is missing, every call takes the op (correct, slower).
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", None)
_increment_version = getattr(torch.autograd.graph, "increment_version", None)
_SHORTCUT_AVAILABLE = _functorch_active is not None and _increment_version is not None

# Eager calls that need a gradient and nothing else from the dispatcher take a torch.autograd.Function
# over the op's own implementation, setup_context and backward (`_with_autograd`): through the op's autograd
# wrapper a call took 2.1-4.5x the host time (138-304 against 52-103 us on an H200 host; bench/python_overhead.py,
# docs/performance.md, session 42), more than many training steps' attention kernels. Same code, same results.
_AUTOGRAD_FUNCTIONS: dict = {}  # op -> its torch.autograd.Function

# How `call` runs an op.
_DIRECT, _FUNCTION, _OP = 0, 1, 2

# nn.Parameter is a Tensor subclass that opts out of __torch_function__: for the dispatcher it is a Tensor
# (a learnable sink is usually one).
_PLAIN_TENSOR_TYPES = (Tensor, torch.nn.Parameter)


# torch.jit.trace records the dispatcher's ops: a call that skipped it would leave the trace without the
# attention (its replay returning whatever the outputs' memory held).
_jit_tracing = getattr(torch._C, "_get_tracing_state", None)


def _route(op, args) -> int:
    if not _SHORTCUT_AVAILABLE or torch.compiler.is_compiling() or _get_current_dispatch_mode() is not None:
        return _OP
    if _jit_tracing is None or _jit_tracing() is not None:
        return _OP
    if _functorch_active():
        return _OP
    grad = torch.is_grad_enabled()
    needs_grad = False
    # Only the tensor parameters' positions (16 arguments of the backward, 7 of them tensors): this runs
    # on every call, the backward's on the autograd engine's device thread.
    for i in _TENSOR_POSITIONS[op]:
        a = args[i]
        if a is None:
            continue
        if type(a) not in _PLAIN_TENSOR_TYPES:
            return _OP  # a subclass, or not a tensor at all: the op's own checks and dispatch
        needs_grad = needs_grad or (grad and a.requires_grad)
    if not needs_grad:
        return _DIRECT
    return _FUNCTION if op in _AUTOGRAD_FUNCTIONS else _OP


def call(op, *args):
    """op(*args), straight into its implementation when the dispatcher has nothing to do."""
    route = _route(op, args)
    if route == _OP:
        return op(*args)
    if route == _FUNCTION:
        return _AUTOGRAD_FUNCTIONS[op].apply(*args)
    fn, mutated = _IMPLEMENTATIONS[op]
    result = fn(*args)
    for i in mutated:
        # What the dispatcher does for a declared mutation: autograd sees the in-place write.
        _increment_version(args[i])
    return result


def _with_autograd(op, name: str, backward, setup_context) -> None:
    """op.register_autograd(backward, setup_context), and the same formula as the op's eager Function."""
    # The Function has no counterpart of `call`'s version bumps for declared mutations.
    assert not _IMPLEMENTATIONS[op][1], f"{name}: an op that mutates its arguments needs the dispatcher"
    op.register_autograd(backward, setup_context=setup_context)

    def forward(ctx, *args):
        # The implementation is looked up per call (not bound here) so that tests can observe its calls. A
        # forward taking ctx, rather than a separate setup_context, spares apply() its per-call
        # inspect.signature binding of the arguments (~10 us).
        output = _IMPLEMENTATIONS[op][0](*args)
        setup_context(ctx, args, output)
        # The backward reads only dout, which exists whenever it runs (out is the one differentiable output):
        # no zero tensors for the LSE and the rng state.
        ctx.set_materialize_grads(False)
        return output

    _AUTOGRAD_FUNCTIONS[op] = type(f"FlashAttn_{name}", (torch.autograd.Function,), {
        "forward": staticmethod(forward),
        "backward": staticmethod(backward),
    })


# ----------------------------------------------------------------------------------------
# Batched forward / backward.


@_custom_op("flashattn::fwd", mutates_args=())
def fwd(q: Tensor, k: Tensor, v: Tensor, softmax_scale: Optional[float], causal: bool, window_left: int,
        window_right: int, softcap: float, alibi_slopes: Optional[Tensor], dropout_p: float,
        sink: Optional[Tensor], deterministic: bool, num_splits: int,
        attn_bias: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Tensor]:
    b, sq, h, d = q.shape
    dv = v.shape[-1]
    out = _empty_contiguous(q) if dv == d else q.new_empty((b, sq, h, dv))
    lse = q.new_empty((b, h, sq), dtype=torch.float32)
    rng_state = rt.dropout_seed_offset(q.device) if dropout_p > 0.0 else _no_rng()
    args = {"q": q, "k": k, "v": v, "out": out, "lse": lse, "num_splits": int(num_splits)}
    args.update(_options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                         rng_state, sink, attn_bias))
    rt.run("forward", args, q.device)
    return out, lse, rng_state


@fwd.register_fake
def _(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, sink,
      deterministic, num_splits, attn_bias=None):
    b, sq, h, _ = q.shape
    out = q.new_empty((b, sq, h, v.shape[-1]))
    lse = q.new_empty((b, h, sq), dtype=torch.float32)
    return out, lse, torch.empty(2, dtype=torch.int64)


@_custom_op("flashattn::bwd", mutates_args=())
def bwd(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, softmax_scale: Optional[float],
        causal: bool, window_left: int, window_right: int, softcap: float, alibi_slopes: Optional[Tensor],
        dropout_p: float, rng_state: Tensor, sink: Optional[Tensor], deterministic: bool,
        attn_bias: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    dq, dk, dv = _empty_contiguous(q), _empty_contiguous(k), _empty_contiguous(v)
    dsink = torch.empty(sink.shape if sink is not None else (0,), dtype=torch.float32, device=q.device)
    args = {"dout": dout, "q": q, "k": k, "v": v, "out": out, "lse": lse, "dq": dq, "dk": dk, "dv": dv,
            "dsink": dsink if sink is not None else None, "deterministic": deterministic}
    args.update(_options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                         rng_state, sink, attn_bias))
    rt.run("backward", args, q.device)
    return dq, dk, dv, dsink


@bwd.register_fake
def _(dout, q, k, v, out, lse, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
      rng_state, sink, deterministic, attn_bias=None):
    dsink = q.new_empty(sink.shape if sink is not None else (0,), dtype=torch.float32)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            torch.empty_like(k, memory_format=torch.contiguous_format),
            torch.empty_like(v, memory_format=torch.contiguous_format), dsink)


def _grad_ready(dout: Tensor) -> Tensor:
    # Gradients arriving from autograd may be expanded or transposed views; the kernels
    # need a unit-stride last dim (the only case where a copy is made, as FlashAttention does).
    return dout if dout.stride(-1) == 1 else dout.contiguous()


def _fwd_setup_context(ctx, inputs, output):
    (q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, sink,
     deterministic, _num_splits, attn_bias) = inputs
    out, lse, rng_state = output
    # As in FlashAttention 2, the LSE output carries no gradient (it is a by-product).
    ctx.mark_non_differentiable(lse)
    ctx.save_for_backward(q, k, v, out, lse, rng_state, alibi_slopes, sink, attn_bias)
    ctx.options = (softmax_scale, causal, window_left, window_right, softcap, dropout_p, deterministic)


def _fwd_backward(ctx, dout, dlse, drng):
    q, k, v, out, lse, rng_state, alibi_slopes, sink, attn_bias = ctx.saved_tensors
    softmax_scale, causal, window_left, window_right, softcap, dropout_p, deterministic = ctx.options
    dq, dk, dv, dsink = call(bwd, _grad_ready(dout), q, k, v, out, lse, softmax_scale, causal, window_left,
                             window_right, softcap, alibi_slopes, dropout_p, rng_state, sink, deterministic,
                             attn_bias)
    # The bias gets no gradient (flash_attn_func refuses a bias that requires one).
    return (dq, dk, dv, None, None, None, None, None, None, None, dsink if sink is not None else None, None, None,
            None)


_with_autograd(fwd, "fwd", _fwd_backward, _fwd_setup_context)


# ----------------------------------------------------------------------------------------
# Variable-length forward / backward.


@_custom_op("flashattn::varlen_fwd", mutates_args=())
def varlen_fwd(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, max_seqlen_q: int,
               max_seqlen_k: int, seqused_q: Optional[Tensor], seqused_k: Optional[Tensor],
               block_table: Optional[Tensor], softmax_scale: Optional[float], causal: bool, window_left: int,
               window_right: int, softcap: float, alibi_slopes: Optional[Tensor], dropout_p: float,
               sink: Optional[Tensor], deterministic: bool, num_splits: int) -> tuple[Tensor, Tensor, Tensor]:
    total_q, h, _ = q.shape
    # Rows outside the used ranges (seqused_q) are left untouched by the library: zero them
    # so the output never exposes uninitialised memory.
    alloc = torch.zeros if seqused_q is not None else torch.empty
    out = alloc((total_q, h, v.shape[-1]), dtype=q.dtype, device=q.device)
    lse = alloc((h, total_q), dtype=torch.float32, device=q.device)
    rng_state = rt.dropout_seed_offset(q.device) if dropout_p > 0.0 else _no_rng()
    args = {"q": q, "k": k, "v": v, "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k,
            "max_seqlen_q": int(max_seqlen_q), "max_seqlen_k": int(max_seqlen_k), "seqused_q": seqused_q,
            "seqused_k": seqused_k, "block_table": block_table, "out": out, "lse": lse,
            "num_splits": int(num_splits)}
    args.update(_options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                         rng_state, sink))
    rt.run("forward_varlen", args, q.device)
    return out, lse, rng_state


@varlen_fwd.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q, seqused_k, block_table,
      softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, sink, deterministic,
      num_splits):
    total_q, h, _ = q.shape
    out = q.new_empty((total_q, h, v.shape[-1]))
    lse = q.new_empty((h, total_q), dtype=torch.float32)
    return out, lse, torch.empty(2, dtype=torch.int64)


@_custom_op("flashattn::varlen_bwd", mutates_args=())
def varlen_bwd(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor, cu_seqlens_q: Tensor,
               cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int, seqused_q: Optional[Tensor],
               seqused_k: Optional[Tensor], softmax_scale: Optional[float], causal: bool, window_left: int,
               window_right: int, softcap: float, alibi_slopes: Optional[Tensor], dropout_p: float,
               rng_state: Tensor, sink: Optional[Tensor],
               deterministic: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    dq, dk, dv = _empty_contiguous(q), _empty_contiguous(k), _empty_contiguous(v)
    dsink = torch.empty(sink.shape if sink is not None else (0,), dtype=torch.float32, device=q.device)
    args = {"dout": dout, "q": q, "k": k, "v": v, "out": out, "lse": lse, "cu_seqlens_q": cu_seqlens_q,
            "cu_seqlens_k": cu_seqlens_k, "max_seqlen_q": int(max_seqlen_q), "max_seqlen_k": int(max_seqlen_k),
            "seqused_q": seqused_q, "seqused_k": seqused_k, "dq": dq, "dk": dk, "dv": dv,
            "dsink": dsink if sink is not None else None, "deterministic": deterministic}
    args.update(_options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                         rng_state, sink))
    rt.run("backward_varlen", args, q.device)
    return dq, dk, dv, dsink


@varlen_bwd.register_fake
def _(dout, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q, seqused_k,
      softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, rng_state, sink,
      deterministic):
    dsink = q.new_empty(sink.shape if sink is not None else (0,), dtype=torch.float32)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            torch.empty_like(k, memory_format=torch.contiguous_format),
            torch.empty_like(v, memory_format=torch.contiguous_format), dsink)


def _varlen_setup_context(ctx, inputs, output):
    (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, seqused_q, seqused_k, block_table,
     softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, sink,
     deterministic, _num_splits) = inputs
    out, lse, rng_state = output
    ctx.mark_non_differentiable(lse)
    ctx.paged = block_table is not None
    ctx.save_for_backward(q, k, v, out, lse, rng_state, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k,
                          alibi_slopes, sink)
    ctx.options = (max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right, softcap,
                   dropout_p, deterministic)


def _varlen_backward(ctx, dout, dlse, drng):
    if ctx.paged:
        raise ValueError("block_table: backward through a paged KV cache is not supported")
    (q, k, v, out, lse, rng_state, cu_seqlens_q, cu_seqlens_k, seqused_q, seqused_k, alibi_slopes,
     sink) = ctx.saved_tensors
    (max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right, softcap, dropout_p,
     deterministic) = ctx.options
    dq, dk, dv, dsink = call(varlen_bwd, _grad_ready(dout), q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k,
                             max_seqlen_q, max_seqlen_k, seqused_q, seqused_k, softmax_scale, causal, window_left,
                             window_right, softcap, alibi_slopes, dropout_p, rng_state, sink, deterministic)
    return (dq, dk, dv) + (None,) * 14 + (dsink if sink is not None else None, None, None)


_with_autograd(varlen_fwd, "varlen_fwd", _varlen_backward, _varlen_setup_context)


# ----------------------------------------------------------------------------------------
# KV cache (inference: no autograd, like FlashAttention).


def _kvcache_args(q, k_cache, v_cache, k, v, rotary_cos, rotary_sin, cache_seqlens, cache_batch_idx, cache_leftpad,
                  block_table, softmax_scale, causal, window_left, window_right, softcap, rotary_interleaved,
                  alibi_slopes, num_splits, sink, out, lse) -> dict:
    args = {"q": q, "k_cache": k_cache, "v_cache": v_cache, "k_new": k, "v_new": v, "rotary_cos": rotary_cos,
            "rotary_sin": rotary_sin, "cache_seqlens": cache_seqlens, "cache_batch_idx": cache_batch_idx,
            "cache_leftpad": cache_leftpad, "block_table": block_table, "rotary_interleaved": rotary_interleaved,
            "num_splits": num_splits, "out": out, "lse": lse}
    args.update(_options(softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, 0.0, None, sink))
    return args


def _kvcache_impl(q, k_cache, v_cache, k, v, rotary_cos, rotary_sin, cache_seqlens, cache_batch_idx, cache_leftpad,
                  block_table, softmax_scale, causal, window_left, window_right, softcap, rotary_interleaved,
                  alibi_slopes, num_splits, sink):
    b, sq, h, _ = q.shape
    out = q.new_empty((b, sq, h, v_cache.shape[-1]))
    lse = q.new_empty((b, h, sq), dtype=torch.float32)
    rt.run("forward_kvcache",
           _kvcache_args(q, k_cache, v_cache, k, v, rotary_cos, rotary_sin, cache_seqlens, cache_batch_idx,
                         cache_leftpad, block_table, softmax_scale, causal, window_left, window_right, softcap,
                         rotary_interleaved, alibi_slopes, num_splits, sink, out, lse), q.device)
    return out, lse


def _kvcache_fake(q, k_cache, v_cache, *rest):
    b, sq, h, _ = q.shape
    return q.new_empty((b, sq, h, v_cache.shape[-1])), q.new_empty((b, h, sq), dtype=torch.float32)


@_custom_op("flashattn::fwd_kvcache", mutates_args=())
def fwd_kvcache(q: Tensor, k_cache: Tensor, v_cache: Tensor, rotary_cos: Optional[Tensor],
                rotary_sin: Optional[Tensor], cache_seqlens: Optional[Tensor], cache_batch_idx: Optional[Tensor],
                cache_leftpad: Optional[Tensor], block_table: Optional[Tensor], softmax_scale: Optional[float],
                causal: bool, window_left: int, window_right: int, softcap: float, rotary_interleaved: bool,
                alibi_slopes: Optional[Tensor], num_splits: int, sink: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    return _kvcache_impl(q, k_cache, v_cache, None, None, rotary_cos, rotary_sin, cache_seqlens, cache_batch_idx,
                         cache_leftpad, block_table, softmax_scale, causal, window_left, window_right, softcap,
                         rotary_interleaved, alibi_slopes, num_splits, sink)


fwd_kvcache.register_fake(_kvcache_fake)


# Writes k/v into the caches in place (declared, so functionalization and CUDA graphs see it).
@_custom_op("flashattn::fwd_kvcache_append", mutates_args=("k_cache", "v_cache"))
def fwd_kvcache_append(q: Tensor, k_cache: Tensor, v_cache: Tensor, k: Tensor, v: Tensor,
                       rotary_cos: Optional[Tensor], rotary_sin: Optional[Tensor], cache_seqlens: Tensor,
                       cache_batch_idx: Optional[Tensor], cache_leftpad: Optional[Tensor],
                       block_table: Optional[Tensor], softmax_scale: Optional[float], causal: bool, window_left: int,
                       window_right: int, softcap: float, rotary_interleaved: bool, alibi_slopes: Optional[Tensor],
                       num_splits: int, sink: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    return _kvcache_impl(q, k_cache, v_cache, k, v, rotary_cos, rotary_sin, cache_seqlens, cache_batch_idx,
                         cache_leftpad, block_table, softmax_scale, causal, window_left, window_right, softcap,
                         rotary_interleaved, alibi_slopes, num_splits, sink)


fwd_kvcache_append.register_fake(_kvcache_fake)


# ----------------------------------------------------------------------------------------
# Combine.


@_custom_op("flashattn::combine", mutates_args=())
def combine(out_partial: Tensor, lse_partial: Tensor, out_dtype: torch.dtype) -> tuple[Tensor, Tensor]:
    _, b, s, h, dv = out_partial.shape
    out = torch.empty((b, s, h, dv), dtype=out_dtype, device=out_partial.device)
    lse = torch.empty((b, s, h), dtype=torch.float32, device=out_partial.device)
    args = {"out_partial": out_partial, "lse_partial": lse_partial, "out": out, "lse": lse}
    rt.run("combine", args, out_partial.device)
    return out, lse


@combine.register_fake
def _(out_partial, lse_partial, out_dtype):
    _, b, s, h, dv = out_partial.shape
    out = out_partial.new_empty((b, s, h, dv), dtype=out_dtype)
    lse = out_partial.new_empty((b, s, h), dtype=torch.float32)
    return out, lse


def window_pair(window_size: Sequence) -> tuple[int, int]:
    """FlashAttention 2/3 (-1 = unbounded) and FlashAttention 4 (None = unbounded) windows."""
    if window_size is None:
        return -1, -1
    left, right = window_size
    return (-1 if left is None else int(left)), (-1 if right is None else int(right))
