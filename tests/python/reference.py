"""Plain-PyTorch attention for checking flashattn: one sequence at a time, whole score rows.

attention_ref(...) computes in float64 (the reference) or in the inputs' own precision
(upcast=False, the "same math in low precision" whose error sets the tolerance), with
every option of the library: causal / bottom-right windows, softcap, ALiBi, learnable sink,
GQA, dropout (the library's exact Philox mask), and rotary embedding for the KV cache.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

# ----------------------------------------------------------------------------------------
# Dropout mask: Philox4x32-10 exactly as src/common/philox.h specifies it.

_M32 = 0xFFFFFFFF


def _mulhilo(a: int, b: torch.Tensor):
    product = b * a  # int64 wraps modulo 2^64: the low 64 bits are exact
    return (product >> 32) & _M32, product & _M32


def _philox(counter, key0: int, key1: int):
    x, y, z, w = counter
    for _ in range(10):
        hi0, lo0 = _mulhilo(0xD2511F53, x)
        hi1, lo1 = _mulhilo(0xCD9E8D57, z)
        x, y, z, w = (hi1 ^ y ^ key0) & _M32, lo1, (hi0 ^ w ^ key1) & _M32, lo0
        key0 = (key0 + 0x9E3779B9) & _M32
        key1 = (key1 + 0xBB67AE85) & _M32
    return x, y, z, w


def dropout_keep_mask(seed: int, offset: int, p: float, batch_head: int, sq: int, sk: int) -> torch.Tensor:
    """Bool (sq, sk): True where element (batch_head, i, j) is kept."""
    threshold = 0 if p <= 0 else min(65535, int(p * 65536.0))
    i = torch.arange(sq, dtype=torch.int64)[:, None].expand(sq, sk)
    j = torch.arange(sk, dtype=torch.int64)[None, :].expand(sq, sk)
    counter = (j >> 3, i.clone(), torch.full_like(i, batch_head & _M32), torch.full_like(i, offset & _M32))
    words = _philox(counter, seed & _M32, ((seed >> 32) ^ (offset >> 32)) & _M32)
    lane = j & 7
    word = torch.where(lane < 2, words[0], torch.where(lane < 4, words[1], torch.where(lane < 6, words[2], words[3])))
    draw = torch.where((lane & 1) == 1, word >> 16, word & 0xFFFF)
    return draw >= threshold


# ----------------------------------------------------------------------------------------
# Attention of one sequence.


def attention_ref(q, k, v, *, softmax_scale=None, causal=False, window=(-1, -1), softcap=0.0, alibi_slopes=None,
                  sink=None, dropout_p=0.0, keep_mask=None, bias=None, upcast=True, reorder_ops=False):
    """q (sq, h, d), k (sk, hk, d), v (sk, hk, dv) -> out (sq, h, dv) in q's dtype, lse (h, sq) fp32.

    alibi_slopes: (h,); sink: (h,); keep_mask: bool (h, sq, sk) for dropout; bias: broadcastable to
    (h, sq, sk), added to the scores after softcap and ALiBi (float) or hiding its False keys (bool).
    upcast: compute in float64; else in the inputs' dtype (P rounded to it before P @ V).
    reorder_ops: scale k instead of q (perturbs the rounding like FlashAttention's tests).
    """
    dtype_out = q.dtype
    compute = torch.float64 if upcast else q.dtype
    q, k, v = q.to(compute), k.to(compute), v.to(compute)
    sq, h, d = q.shape
    sk, hk, _ = k.shape
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(d)
    groups = h // hk
    k = k.repeat_interleave(groups, dim=1)
    v = v.repeat_interleave(groups, dim=1)
    if reorder_ops:
        scores = torch.einsum("ihd,jhd->hij", q, k * scale)
    else:
        scores = torch.einsum("ihd,jhd->hij", q * scale, k)
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    i = torch.arange(sq)[:, None]
    j = torch.arange(sk)[None, :]
    diag = i + sk - sq
    if alibi_slopes is not None:
        scores = scores - alibi_slopes.to(compute)[:, None, None] * (diag - j).abs().to(compute)
    if bias is not None and bias.dtype != torch.bool:
        # Rounded as the score it joins: in the inputs' precision for the low-precision reference.
        scores = scores + bias.to(compute)
    left, right = window
    if causal:
        right = 0
    visible = torch.ones(sq, sk, dtype=torch.bool)
    if bias is not None and bias.dtype == torch.bool:
        visible = visible & torch.broadcast_to(bias, (h, sq, sk))
    if left >= 0:
        visible &= j >= diag - left
    if right >= 0:
        visible &= j <= diag + right
    scores = scores.masked_fill(~visible, float("-inf"))
    if sk > 0:
        row_max = scores.amax(dim=-1, keepdim=True)
    else:
        row_max = torch.full((h, sq, 1), float("-inf"), dtype=compute)
    if sink is not None:
        sink_logit = sink.to(compute)[:, None, None].expand(h, sq, 1)
        row_max = torch.maximum(row_max, sink_logit)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exp = torch.exp(scores - row_max)
    denom = exp.sum(dim=-1, keepdim=True)
    if sink is not None:
        denom = denom + torch.exp(sink_logit - row_max)
    probs = torch.where(denom > 0, exp / torch.where(denom > 0, denom, torch.ones_like(denom)), torch.zeros_like(exp))
    lse = (row_max + torch.log(denom)).squeeze(-1)  # -inf where nothing is visible and no sink
    if dropout_p > 0:
        probs = probs * keep_mask.to(compute) / (1.0 - dropout_p)
    if not upcast:
        probs = probs.to(v.dtype)
    out = torch.einsum("hij,jhd->ihd", probs, v)
    return out.to(dtype_out), lse.float()


def attention_batched_ref(q, k, v, **kw):
    """(b, s, h, d) tensors: the per-sequence reference stacked; lse (b, h, sq)."""
    outs, lses = [], []
    for b in range(q.shape[0]):
        kwb = dict(kw)
        if kw.get("keep_mask") is not None:
            kwb["keep_mask"] = kw["keep_mask"][b]
        if kw.get("alibi_slopes") is not None and kw["alibi_slopes"].dim() == 2:
            kwb["alibi_slopes"] = kw["alibi_slopes"][b]
        if kw.get("bias") is not None:
            bias = kw["bias"]
            bias = bias.reshape((1,) * (4 - bias.dim()) + tuple(bias.shape))
            kwb["bias"] = bias[b if bias.shape[0] > 1 else 0]
        out, lse = attention_ref(q[b], k[b], v[b], **kwb)
        outs.append(out)
        lses.append(lse)
    return torch.stack(outs), torch.stack(lses)


# ----------------------------------------------------------------------------------------
# Rotary embedding (for the KV cache tests and the MHA module).


def apply_rotary_ref(x, cos, sin, positions, interleaved):
    """x (s, h, d); cos/sin (s_rotary, rd/2); positions (s,) ints. Rotates the first rd dims."""
    rd = cos.shape[1] * 2
    c = cos[positions].to(torch.float64)[:, None, :]
    s = sin[positions].to(torch.float64)[:, None, :]
    xr = x[..., :rd].to(torch.float64)
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        rotated = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)
    else:
        x1, x2 = xr[..., : rd // 2], xr[..., rd // 2:]
        rotated = torch.cat((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1)
    return torch.cat((rotated.to(x.dtype), x[..., rd:]), dim=-1)


def max_err(a, b) -> float:
    return (a.detach().cpu().double() - b.detach().cpu().double()).abs().max().item() if a.numel() else 0.0


def assert_close_to_ref(out, ref, ref_lowp, name="out", factor=2.0, atol=None):
    """The project's rule: max|out - ref| <= factor * max|ref_lowp - ref| + atol."""
    if atol is None:
        atol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5}[out.dtype]
        atol *= max(1.0, ref.double().abs().max().item()) if ref.numel() else 1.0
    assert not torch.isnan(out).any(), f"{name}: NaN in output"
    err = max_err(out, ref)
    bound = factor * max_err(ref_lowp, ref) + atol
    assert err <= bound, f"{name}: max error {err:.3e} exceeds {bound:.3e} (2 x low-precision error + atol)"
