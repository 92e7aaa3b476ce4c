"""Multi-head attention layer like ``flash_attn.modules.mha.MHA``, on flashattn.

Projections (fused qkv, or q + kv for cross attention / GQA), optional rotary embedding,
and incremental decoding through a KV cache (flash_attn_with_kvcache appends the new
keys/values in place and applies rotary to them inside the call).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import torch
from torch import Tensor, nn

from ..interface import flash_attn_kvpacked_func, flash_attn_varlen_kvpacked_func, flash_attn_with_kvcache


@dataclass
class InferenceParams:
    """State of incremental decoding, shared by the layers of a model (as in flash_attn).

    key_value_memory_dict maps layer_idx to its cache (batch, max_seqlen, 2, heads_kv, head_dim).
    seqlen_offset: tokens already in the cache; lengths_per_sample: optional int32 (batch)
    per-sequence lengths (overrides seqlen_offset).
    """

    max_seqlen: int
    max_batch_size: int
    seqlen_offset: int = 0
    batch_size_offset: int = 0
    key_value_memory_dict: dict = field(default_factory=dict)
    lengths_per_sample: Optional[Tensor] = None

    def reset(self, max_seqlen: int, max_batch_size: int) -> None:
        self.max_seqlen = max_seqlen
        self.max_batch_size = max_batch_size
        self.seqlen_offset = 0
        if self.lengths_per_sample is not None:
            self.lengths_per_sample.zero_()


class RotaryEmbedding(nn.Module):
    """Rotary position embedding (RoFormer) on the first `dim` dims of each head.

    interleaved=False rotates pairs (i, i + dim/2) (GPT-NeoX); True rotates (2i, 2i+1) (GPT-J).
    The cos/sin tables (seqlen, dim/2) are cached and grown on demand; flash_attn_with_kvcache
    consumes them directly when decoding.
    """

    def __init__(self, dim: int, base: float = 10000.0, interleaved: bool = False, device=None):
        super().__init__()
        if dim % 2:
            raise ValueError(f"rotary_emb_dim: {dim} must be even")
        self.dim = dim
        self.interleaved = interleaved
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=device) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._cos: Optional[Tensor] = None
        self._sin: Optional[Tensor] = None

    def cos_sin(self, seqlen: int, device, dtype):
        if (self._cos is None or self._cos.shape[0] < seqlen or self._cos.device != device
                or self._cos.dtype != dtype):
            t = torch.arange(seqlen, device=device, dtype=torch.float32)
            freqs = torch.outer(t, self.inv_freq.to(device))
            self._cos, self._sin = freqs.cos().to(dtype), freqs.sin().to(dtype)
        return self._cos[:seqlen], self._sin[:seqlen]

    def rotate(self, x: Tensor, offset: int = 0) -> Tensor:
        """x (b, s, h, d): rotates position offset + t of row t."""
        s = x.shape[1]
        cos, sin = self.cos_sin(offset + s, x.device, x.dtype)
        cos, sin = cos[offset:][None, :, None, :].float(), sin[offset:][None, :, None, :].float()
        rot, rest = x[..., :self.dim].float(), x[..., self.dim:]
        if self.interleaved:
            x1, x2 = rot[..., 0::2], rot[..., 1::2]
            rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
        else:
            x1, x2 = rot.chunk(2, dim=-1)
            rotated = torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
        return torch.cat((rotated.to(x.dtype), rest), dim=-1)


class MHA(nn.Module):
    """Multi-head self/cross attention with flashattn kernels.

    Arguments follow flash_attn.modules.mha.MHA: embed_dim, num_heads, num_heads_kv (GQA/MQA),
    cross_attn, qkv_proj_bias, out_proj_bias, dropout (attention dropout, training only),
    softmax_scale, causal, layer_idx (key of this layer's cache in InferenceParams),
    rotary_emb_dim / rotary_emb_base / rotary_emb_interleaved, window_size, use_alibi,
    return_residual, device, dtype.
    """

    def __init__(self, embed_dim: int, num_heads: int, num_heads_kv: Optional[int] = None, cross_attn: bool = False,
                 qkv_proj_bias: bool = True, out_proj_bias: bool = True, dropout: float = 0.0,
                 softmax_scale: Optional[float] = None, causal: bool = False, layer_idx: Optional[int] = None,
                 rotary_emb_dim: int = 0, rotary_emb_base: float = 10000.0, rotary_emb_interleaved: bool = False,
                 use_alibi: bool = False, window_size=(-1, -1), return_residual: bool = False, device=None,
                 dtype=None, **unsupported):
        super().__init__()
        if unsupported:
            raise ValueError(f"MHA: arguments not supported by flashattn: {sorted(unsupported)}")
        factory = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.num_heads_kv = num_heads_kv if num_heads_kv is not None else num_heads
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim: {embed_dim} is not a multiple of num_heads {num_heads}")
        if num_heads % self.num_heads_kv:
            raise ValueError(f"num_heads_kv: {self.num_heads_kv} does not divide num_heads {num_heads}")
        self.head_dim = embed_dim // num_heads
        self.cross_attn = cross_attn
        self.causal = causal
        self.layer_idx = layer_idx
        self.dropout = dropout
        self.softmax_scale = softmax_scale
        self.window_size = window_size
        self.return_residual = return_residual
        self.rotary_emb_dim = rotary_emb_dim
        self.rotary_emb = (RotaryEmbedding(rotary_emb_dim, rotary_emb_base, rotary_emb_interleaved, device=device)
                           if rotary_emb_dim > 0 else None)
        if use_alibi:
            self.register_buffer("alibi_slopes", _alibi_slopes(num_heads, device), persistent=False)
        else:
            self.alibi_slopes = None
        kv_dim = 2 * self.head_dim * self.num_heads_kv
        if cross_attn:
            self.Wq = nn.Linear(embed_dim, embed_dim, bias=qkv_proj_bias, **factory)
            self.Wkv = nn.Linear(embed_dim, kv_dim, bias=qkv_proj_bias, **factory)
        else:
            self.Wqkv = nn.Linear(embed_dim, embed_dim + kv_dim, bias=qkv_proj_bias, **factory)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=out_proj_bias, **factory)

    # -- inference cache ------------------------------------------------------------------

    def allocate_inference_cache(self, batch_size: int, max_seqlen: int, dtype=None) -> Tensor:
        dtype = dtype or self.out_proj.weight.dtype
        return torch.empty(batch_size, max_seqlen, 2, self.num_heads_kv, self.head_dim, dtype=dtype,
                           device=self.out_proj.weight.device)

    def _kv_cache(self, inference_params: InferenceParams, batch: int, dtype) -> Tensor:
        if self.layer_idx is None:
            raise ValueError("layer_idx: MHA needs a layer_idx to decode with inference_params")
        cache = inference_params.key_value_memory_dict.get(self.layer_idx)
        if cache is None:
            cache = self.allocate_inference_cache(inference_params.max_batch_size, inference_params.max_seqlen, dtype)
            inference_params.key_value_memory_dict[self.layer_idx] = cache
        start = inference_params.batch_size_offset
        return cache[start:start + batch]

    def _attend_with_cache(self, q: Tensor, kv: Tensor, inference_params: InferenceParams) -> Tensor:
        batch = q.shape[0]
        cache = self._kv_cache(inference_params, batch, q.dtype)
        seqlens = inference_params.lengths_per_sample
        if seqlens is None:
            seqlens = inference_params.seqlen_offset
        elif seqlens.shape[0] != batch:
            seqlens = seqlens[inference_params.batch_size_offset:inference_params.batch_size_offset + batch]
        cos = sin = None
        if self.rotary_emb is not None:
            cos, sin = self.rotary_emb.cos_sin(inference_params.max_seqlen, q.device, q.dtype)
        return flash_attn_with_kvcache(q, cache[:, :, 0], cache[:, :, 1], k=kv[:, :, 0], v=kv[:, :, 1],
                                       rotary_cos=cos, rotary_sin=sin, cache_seqlens=seqlens,
                                       softmax_scale=self.softmax_scale, causal=self.causal,
                                       window_size=self.window_size,
                                       rotary_interleaved=self.rotary_emb.interleaved if self.rotary_emb else False,
                                       alibi_slopes=self.alibi_slopes)

    # -- forward --------------------------------------------------------------------------

    def forward(self, x: Tensor, x_kv: Optional[Tensor] = None, cu_seqlens: Optional[Tensor] = None,
                max_seqlen=None, inference_params: Optional[InferenceParams] = None, **kwargs):
        """x: (b, s, embed_dim), or (total, embed_dim) with cu_seqlens/max_seqlen (varlen)."""
        if kwargs:
            raise ValueError(f"MHA.forward: arguments not supported by flashattn: {sorted(kwargs)}")
        varlen = cu_seqlens is not None
        if varlen and (inference_params is not None or self.rotary_emb is not None):
            raise ValueError("cu_seqlens: varlen input is not supported with inference_params or rotary embedding")
        dropout = self.dropout if self.training else 0.0
        common = dict(softmax_scale=self.softmax_scale, causal=self.causal, window_size=self.window_size,
                      alibi_slopes=self.alibi_slopes)
        lead = x.shape[:-1]
        if self.cross_attn:
            if x_kv is None:
                raise ValueError("x_kv: cross attention needs the key/value input")
            q = self.Wq(x).view(*lead, self.num_heads, self.head_dim)
            kv = self.Wkv(x_kv).view(*x_kv.shape[:-1], 2, self.num_heads_kv, self.head_dim)
        else:
            qkv = self.Wqkv(x)
            q_size = self.num_heads * self.head_dim
            q = qkv[..., :q_size].view(*lead, self.num_heads, self.head_dim)
            kv = qkv[..., q_size:].view(*lead, 2, self.num_heads_kv, self.head_dim)

        if inference_params is not None and inference_params.seqlen_offset > 0:
            # Decoding: rotary of q and of the new keys happens inside the kernel.
            out = self._attend_with_cache(q, kv, inference_params)
        else:
            if self.rotary_emb is not None:
                q = self.rotary_emb.rotate(q)
                k = self.rotary_emb.rotate(kv[:, :, 0])
                kv = torch.stack((k, kv[:, :, 1]), dim=2)
            if inference_params is not None:  # prefill: fill the cache for later steps
                cache = self._kv_cache(inference_params, q.shape[0], q.dtype)
                cache[:, :kv.shape[1]].copy_(kv)
            # q and kv stay views of the projection's output: the kernels read them in place.
            if varlen:
                if self.cross_attn:
                    raise ValueError("cu_seqlens: varlen cross attention is not supported by MHA")
                out = flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen, dropout,
                                                      **common)
            else:
                out = flash_attn_kvpacked_func(q, kv, dropout, **common)
        out = self.out_proj(out.reshape(*lead, self.embed_dim))
        return (out, x) if self.return_residual else out


def _alibi_slopes(num_heads: int, device=None) -> Tensor:
    """The ALiBi paper's geometric slopes (also for head counts that are not powers of 2)."""
    def powers(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(num_heads).is_integer():
        slopes = powers(num_heads)
    else:
        closest = 2 ** math.floor(math.log2(num_heads))
        slopes = powers(closest) + powers(2 * closest)[0::2][: num_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32, device=device)
