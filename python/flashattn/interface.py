"""Drop-in replacement for ``flash_attn.flash_attn_interface`` (FlashAttention 2), with the
later FlashAttention 3/4 arguments as keyword-only extras.

Switch by the import line::

    from flashattn import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

Shapes and conventions are FlashAttention 2's: q (b, sq, h, d), k/v (b, sk, hk, d), varlen
(total, h, d) with int32 ``cu_seqlens`` of b + 1 entries, LSE (b, h, sq) or (h, total_q) in
fp32 natural-log units. Differences, all deliberate:

* A fully masked query row has output 0 and LSE -inf (FlashAttention 3/4; FA2 reports +inf).
* ``return_attn_probs=True`` returns ``(out, lse, None)``: attention probabilities are never
  materialised. The LSE carries no gradient (as in FlashAttention 2).
* ``max_seqlen_q/k`` may be ints or tensors. A tensor is never read on the host (no sync,
  CUDA-graph safe, no recompilation per value): the bound derived from the shapes is used.
* Non-contiguous inputs are read through their strides (no copy); only the last dimension
  must have stride 1, else ValueError naming the argument.
* Extras: ``learnable_sink`` (FA4's per-head sink logit, with gradient), ``seqused_q/k``,
  ``page_table`` (alias of ``block_table``), ``num_splits``.
"""

from __future__ import annotations

from typing import Optional, Union

import torch
from torch import Tensor

from . import _ops
from . import _runtime as rt

__all__ = [
    "flash_attn_func",
    "flash_attn_qkvpacked_func",
    "flash_attn_kvpacked_func",
    "flash_attn_varlen_func",
    "flash_attn_varlen_qkvpacked_func",
    "flash_attn_varlen_kvpacked_func",
    "flash_attn_with_kvcache",
    "flash_attn_combine",
]

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _check_qkv(q: Tensor, k: Tensor, v: Tensor, rank: int, names=("q", "k", "v"), k_rank=None) -> None:
    """Types, ranks (q: `rank`; k/v: `k_rank`, default `rank`), dtypes, devices, unit last stride."""
    kv_rank = rank if k_rank is None else k_rank
    # Every call passes here: the usual case in one expression (half the host time of the loop below, which
    # finds and names whatever is off, and also accepts a size-1 last dimension of any stride).
    if (isinstance(q, Tensor) and isinstance(k, Tensor) and isinstance(v, Tensor)
            and q.dim() == rank and k.dim() == kv_rank and v.dim() == kv_rank
            and q.dtype in _FLOAT_DTYPES and k.dtype == q.dtype and v.dtype == q.dtype
            and q.stride(-1) == 1 and k.stride(-1) == 1 and v.stride(-1) == 1
            and k.device == q.device and v.device == q.device):
        return
    for t, name in zip((q, k, v), names):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        expected = rank if name == names[0] else kv_rank
        if t.dim() != expected:
            raise ValueError(f"{name}: expected a {expected}-d tensor, got shape {tuple(t.shape)}")
        if t.dtype not in _FLOAT_DTYPES:
            raise TypeError(f"{name}: dtype {t.dtype} is not supported (float16, bfloat16 or float32)")
        rt.check_last_dim_contiguous(t, name)
    for t, name in ((k, names[1]), (v, names[2])):
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: dtype {t.dtype} differs from {names[0]} dtype {q.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: device {t.device} differs from {names[0]} device {q.device}")


def _check_index(t: Optional[Tensor], name: str, device: torch.device) -> None:
    if t is None:
        return
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected an int32 torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.int32:
        raise TypeError(f"{name}: dtype {t.dtype} must be torch.int32")
    if t.device != device:
        raise ValueError(f"{name}: device {t.device} differs from q device {device}")


def _sink(learnable_sink: Optional[Tensor], device: torch.device) -> Optional[Tensor]:
    if learnable_sink is None:
        return None
    if learnable_sink.device != device:
        raise ValueError(f"learnable_sink: device {learnable_sink.device} differs from q device {device}")
    # The library takes fp32 sink logits; the cast is differentiable and tiny (h values).
    return learnable_sink if learnable_sink.dtype == torch.float32 else learnable_sink.float()


def _bias(attn_bias: Optional[Tensor], device: torch.device) -> Optional[Tensor]:
    if attn_bias is None:
        return None
    if not isinstance(attn_bias, Tensor):
        raise TypeError(f"attn_bias: expected a torch.Tensor, got {type(attn_bias).__name__}")
    if attn_bias.device != device:
        raise ValueError(f"attn_bias: device {attn_bias.device} differs from q device {device}")
    if attn_bias.requires_grad and torch.is_grad_enabled():
        # A learned bias would silently stop learning: its gradient is not computed.
        raise ValueError("attn_bias: requires_grad is set, but flashattn computes no gradient for the bias "
                         "(pass attn_bias.detach() if it is a constant)")
    return attn_bias


def _alibi(alibi_slopes: Optional[Tensor], device: torch.device) -> Optional[Tensor]:
    if alibi_slopes is None:
        return None
    if alibi_slopes.dtype != torch.float32:
        raise TypeError(f"alibi_slopes: dtype {alibi_slopes.dtype} must be torch.float32")
    if alibi_slopes.device != device:
        raise ValueError(f"alibi_slopes: device {alibi_slopes.device} differs from q device {device}")
    return alibi_slopes


def _seqlen_bound(max_seqlen: Union[int, Tensor, None], bound: int) -> int:
    """A host int bound on every sequence's length, read without a device sync."""
    if max_seqlen is None or isinstance(max_seqlen, Tensor):
        return bound
    return int(max_seqlen)


# ----------------------------------------------------------------------------------------
# Batched.


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False, return_attn_probs=False, *, learnable_sink=None,
                    num_splits=0, return_lse=False, attn_bias=None):
    """Exact attention softmax(scale * q k^T [+ alibi] [softcap]) v over (b, s, h, d) tensors.

    q: (b, sq, h, d); k: (b, sk, hk, d); v: (b, sk, hk, dv); h % hk == 0 (GQA/MQA).
    causal / window_size are bottom-right aligned (key j visible to query i iff
    i + sk - sq - left <= j <= i + sk - sq + right). learnable_sink: (h,) logits that join
    the softmax denominator (FA4). num_splits (as FlashAttention 3's): 0, the default here, lets the
    library split the keys of decoding shapes as the GPU and the batch suggest (every tile of few, or
    the last partial round's of more tiles than the GPU runs at once) and pick a decode kernel by the
    batch's size; 1 never splits them, so that a sequence's result does not depend on the batch's
    size (batch-invariant decoding); n > 1 asks for n parts where a kernel splits (Hopper's decode
    kernels).
    attn_bias (an extension of flashattn's): a score bias or mask broadcastable to (b, h, sq, sk) as
    scaled_dot_product_attention's attn_mask is, (B, H, SQ, sk) or with leading dims left out, B in {1, b},
    H in {1, h}, SQ in {1, sq}, last dim contiguous. A float tensor (fp32 or q's dtype) is added to the
    scores after softcap and ALiBi (-inf hides a key); a bool tensor keeps the keys where it is True. It
    gets no gradient: a bias that requires one is refused. On Hopper such calls run on the cuda_sm80
    kernels (the Hopper kernels take no bias).
    Returns out (b, sq, h, dv), or (out, lse, None) with return_attn_probs (lse (b, h, sq), fp32);
    return_lse=True (FA4) returns (out, lse).
    """
    _check_qkv(q, k, v, rank=4)
    left, right = _ops.window_pair(window_size)
    out, lse, _ = _ops.call(_ops.fwd, q, k, v, softmax_scale, bool(causal), left, right, float(softcap),
                            _alibi(alibi_slopes, q.device), float(dropout_p), _sink(learnable_sink, q.device),
                            bool(deterministic), int(num_splits), _bias(attn_bias, q.device))
    if return_attn_probs:
        return out, lse, None
    if return_lse:
        return out, lse
    return out


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                              softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                              num_heads_q=None, learnable_sink=None, attn_bias=None):
    """qkv: (b, s, 3, h, d), or (b, s, h + 2 * hk, d) with num_heads_q = h (FA3's GQA packing).

    q, k and v are read in place through strides (no copy).
    """
    if not isinstance(qkv, Tensor):
        raise TypeError(f"qkv: expected a torch.Tensor, got {type(qkv).__name__}")
    q, k, v = _unpack_qkv(qkv, num_heads_q, head_axis=2)
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                           deterministic, return_attn_probs, learnable_sink=learnable_sink, attn_bias=attn_bias)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                             softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                             learnable_sink=None, attn_bias=None):
    """kv: (b, sk, 2, hk, d); k and v are read in place through strides (no copy)."""
    if not isinstance(kv, Tensor):
        raise TypeError(f"kv: expected a torch.Tensor, got {type(kv).__name__}")
    if kv.dim() != 5 or kv.shape[2] != 2:
        raise ValueError(f"kv: expected shape (b, sk, 2, hk, d), got {tuple(kv.shape)}")
    k, v = kv.unbind(2)
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes,
                           deterministic, return_attn_probs, learnable_sink=learnable_sink, attn_bias=attn_bias)


def _unpack_qkv(qkv: Tensor, num_heads_q: Optional[int], head_axis: int):
    packed_rank = head_axis + 3  # (..., 3, h, d)
    if qkv.dim() == packed_rank:
        if qkv.shape[head_axis] != 3:
            raise ValueError(f"qkv: dimension {head_axis} must be 3 (q, k, v), got shape {tuple(qkv.shape)}")
        return qkv.unbind(head_axis)
    if qkv.dim() == packed_rank - 1:
        heads = qkv.shape[head_axis]
        if num_heads_q is None:
            raise ValueError(f"qkv: shape {tuple(qkv.shape)} has heads packed together; pass num_heads_q")
        heads_kv = (heads - num_heads_q) // 2
        if num_heads_q <= 0 or heads_kv <= 0 or num_heads_q + 2 * heads_kv != heads:
            raise ValueError(f"num_heads_q: {num_heads_q} does not split {heads} packed heads into "
                             "h + 2 * hk")
        return qkv.split([num_heads_q, heads_kv, heads_kv], dim=head_axis)
    raise ValueError(f"qkv: expected rank {packed_rank} (..., 3, h, d) or {packed_rank - 1} with num_heads_q, "
                     f"got shape {tuple(qkv.shape)}")


# ----------------------------------------------------------------------------------------
# Variable length.


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None, *, seqused_q=None,
                           seqused_k=None, page_table=None, learnable_sink=None, num_splits=0, return_lse=False):
    """Attention over sequences packed along the first dimension.

    q: (total_q, h, d); k/v: (total_k, hk, d) or, with block_table/page_table (b, max_pages)
    int32, paged (num_blocks, page_size, hk, d) with any page size. cu_seqlens_q/k: int32 (b + 1).
    seqused_q/k: optional int32 (b): only the first seqused[s] rows of each sequence take part
    (the rest of out is 0). max_seqlen_q/k: int bounds, or tensors (then the bound comes from
    the shapes, with no device sync). num_splits as flash_attn_func's (1: no key split). Returns out
    (total_q, h, dv), or (out, lse, None) with return_attn_probs (lse (h, total_q)).
    """
    _check_qkv(q, k, v, rank=3, k_rank=4 if (block_table is not None or page_table is not None) else 3)
    if page_table is not None:
        if block_table is not None and block_table is not page_table:
            raise ValueError("page_table: give block_table or page_table (its alias), not both")
        block_table = page_table
    for t, name in ((cu_seqlens_q, "cu_seqlens_q"), (cu_seqlens_k, "cu_seqlens_k"), (seqused_q, "seqused_q"),
                    (seqused_k, "seqused_k"), (block_table, "block_table")):
        _check_index(t, name, q.device)
    if cu_seqlens_q is None or cu_seqlens_k is None:
        raise ValueError("cu_seqlens_q/cu_seqlens_k: both are required for variable-length attention")
    if block_table is not None and torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        raise ValueError("block_table: backward through a paged KV cache is not supported; "
                         "run it under torch.no_grad() or without requires_grad")
    bound_k = block_table.shape[1] * k.shape[1] if block_table is not None else k.shape[0]
    left, right = _ops.window_pair(window_size)
    out, lse, _ = _ops.call(_ops.varlen_fwd, q, k, v, cu_seqlens_q, cu_seqlens_k,
                            _seqlen_bound(max_seqlen_q, q.shape[0]), _seqlen_bound(max_seqlen_k, bound_k), seqused_q,
                            seqused_k, block_table, softmax_scale, bool(causal), left, right, float(softcap),
                            _alibi(alibi_slopes, q.device), float(dropout_p), _sink(learnable_sink, q.device),
                            bool(deterministic), int(num_splits))
    if return_attn_probs:
        return out, lse, None
    if return_lse:
        return out, lse
    return out


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0, softmax_scale=None, causal=False,
                                     window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                                     return_attn_probs=False, *, num_heads_q=None, learnable_sink=None):
    """qkv: (total, 3, h, d) (or (total, h + 2 * hk, d) with num_heads_q); one cu_seqlens for q and k."""
    if not isinstance(qkv, Tensor):
        raise TypeError(f"qkv: expected a torch.Tensor, got {type(qkv).__name__}")
    q, k, v = _unpack_qkv(qkv, num_heads_q, head_axis=1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, dropout_p,
                                  softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs, learnable_sink=learnable_sink)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                                    softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                                    learnable_sink=None):
    """kv: (total_k, 2, hk, d), read in place through strides."""
    if not isinstance(kv, Tensor):
        raise TypeError(f"kv: expected a torch.Tensor, got {type(kv).__name__}")
    if kv.dim() != 4 or kv.shape[1] != 2:
        raise ValueError(f"kv: expected shape (total_k, 2, hk, d), got {tuple(kv.shape)}")
    k, v = kv.unbind(1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
                                  softmax_scale, causal, window_size, softcap, alibi_slopes, deterministic,
                                  return_attn_probs, learnable_sink=learnable_sink)


# ----------------------------------------------------------------------------------------
# KV cache.


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None, cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0, return_softmax_lse=False, *,
                            page_table=None, learnable_sink=None):
    """Attention of q over a KV cache, optionally appending new k/v first (in place).

    q: (b, sq, h, d). k_cache/v_cache: (b_cache, s_cache, hk, d), or paged
    (num_blocks, page_size, hk, d) with block_table/page_table (b, max_pages) int32, any page size.
    k/v: optional (b, s_new, hk, d) written at positions cache_seqlens[s] onward (rotated by
    rotary_cos/sin (s_rotary, rotary_dim / 2) if given; q too). cache_seqlens: int or int32 (b).
    cache_batch_idx: int32 (b) rows of a dense cache. cache_leftpad: int32 (b) first valid position.
    num_splits: split-KV parts (0 = heuristic, 1 = no split).
    Returns out (b, sq, h, dv), or (out, lse) with return_softmax_lse (lse (b, h, sq), fp32).
    No autograd (as in FlashAttention).
    """
    _check_qkv(q, k_cache, v_cache, rank=4, names=("q", "k_cache", "v_cache"))
    if page_table is not None:
        if block_table is not None and block_table is not page_table:
            raise ValueError("page_table: give block_table or page_table (its alias), not both")
        block_table = page_table
    if (k is None) != (v is None):
        raise ValueError("k/v: give both new k and new v, or neither")
    if k is not None:
        _check_qkv(q, k, v, rank=4)
    if isinstance(cache_seqlens, int):
        cache_seqlens = torch.full((q.shape[0],), cache_seqlens, dtype=torch.int32, device=q.device)
    for t, name in ((cache_seqlens, "cache_seqlens"), (cache_batch_idx, "cache_batch_idx"),
                    (cache_leftpad, "cache_leftpad"), (block_table, "block_table")):
        _check_index(t, name, q.device)
    for t, name in ((rotary_cos, "rotary_cos"), (rotary_sin, "rotary_sin")):
        if t is not None:
            if t.dtype != q.dtype:
                raise TypeError(f"{name}: dtype {t.dtype} must equal q dtype {q.dtype}")
            rt.check_last_dim_contiguous(t, name)
    left, right = _ops.window_pair(window_size)
    common = (rotary_cos, rotary_sin)
    tail = (cache_batch_idx, cache_leftpad, block_table, softmax_scale, bool(causal), left, right, float(softcap),
            bool(rotary_interleaved), _alibi(alibi_slopes, q.device), int(num_splits),
            _sink(learnable_sink, q.device))
    if k is not None:
        if cache_seqlens is None:
            raise ValueError("cache_seqlens: required when new k/v are appended to the cache")
        out, lse = _ops.call(_ops.fwd_kvcache_append, q, k_cache, v_cache, k, v, *common, cache_seqlens, *tail)
    else:
        out, lse = _ops.call(_ops.fwd_kvcache, q, k_cache, v_cache, *common, cache_seqlens, *tail)
    return (out, lse) if return_softmax_lse else out


# ----------------------------------------------------------------------------------------
# Combine (FlashAttention 3).


def flash_attn_combine(out_partial, lse_partial, out=None, out_dtype=None):
    """Merge split-KV partial results: out = sum_s exp(lse_s - lse) out_s, lse = logsumexp_s lse_s.

    out_partial: fp32 (splits, b, s, h, dv); lse_partial: fp32 (splits, b, s, h).
    Returns (out (b, s, h, dv) in out_dtype (default: out_partial's), lse (b, s, h) fp32).
    If `out` is given the result is also written into it.
    """
    if not isinstance(out_partial, Tensor) or not isinstance(lse_partial, Tensor):
        raise TypeError("out_partial/lse_partial: expected torch.Tensors")
    if out_partial.dim() != 5:
        raise ValueError(f"out_partial: expected shape (splits, b, s, h, dv), got {tuple(out_partial.shape)}")
    rt.check_last_dim_contiguous(out_partial, "out_partial")
    if out_dtype is None:
        out_dtype = out.dtype if out is not None else out_partial.dtype
    result, lse = _ops.call(_ops.combine, out_partial, lse_partial, out_dtype)
    if out is not None:
        out.copy_(result)
        result = out
    return result, lse
