"""The flash_attn-compatible interface against the float64 PyTorch reference.

Rule (as FlashAttention's own tests): max|out - ref| <= 2 * max|ref_lowp - ref| + atol, where
ref is float64 and ref_lowp the same math in the inputs' precision; gradients likewise via
torch.autograd.grad. Runs on the CPU backend always and on CUDA when the build and machine
have it.
"""

import math

import pytest
import torch

import flashattn
from flashattn import _ops
from reference import (apply_rotary_ref, assert_close_to_ref, attention_batched_ref, attention_ref,
                       dropout_keep_mask, max_err)


def _rand(*shape, dtype, device, scale=1.0):
    return (torch.randn(*shape, dtype=torch.float32) * scale).to(dtype=dtype, device=device)


def _grads(out, inputs, g):
    return torch.autograd.grad(out, inputs, g, allow_unused=True)


def _ref_and_lowp(q, k, v, g, ref_fn, **kw):
    """Float64 reference and low-precision reference outputs (and grads if g is given)."""
    results = []
    for upcast in (True, False):
        ins = [t.detach().cpu().to(torch.float64 if upcast else t.dtype).requires_grad_(g is not None)
               for t in (q, k, v)]
        extra = {}
        if kw.get("sink") is not None:
            extra["sink"] = kw["sink"].detach().cpu().double().requires_grad_(g is not None)
        out, lse = ref_fn(*ins, upcast=upcast, reorder_ops=not upcast, **{**kw, **extra})
        grads = None
        if g is not None:
            wrt = ins + ([extra["sink"]] if "sink" in extra else [])
            grads = torch.autograd.grad(out, wrt, g.cpu().to(out.dtype))
        results.append((out, lse, grads))
    return results


CONFIGS = [
    # (sq, sk, h, hk, d, causal, window, softcap, alibi)
    (1, 37, 4, 4, 32, False, (-1, -1), 0.0, False),
    (17, 33, 4, 2, 64, True, (-1, -1), 0.0, False),
    (33, 17, 4, 1, 40, True, (-1, -1), 0.0, False),
    (48, 48, 6, 2, 64, False, (7, 3), 0.0, False),
    (45, 64, 4, 4, 32, False, (-1, -1), 5.0, False),
    (31, 29, 4, 2, 64, True, (-1, -1), 0.0, True),
    (40, 64, 2, 2, 128, False, (16, -1), 0.0, True),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "sq{}-sk{}-h{}-hk{}-d{}-c{}-w{}-sc{}-al{}".format(*c))
def test_flash_attn_func(device, dtype, config):
    sq, sk, h, hk, d, causal, window, softcap, alibi = config
    b = 2
    q = _rand(b, sq, h, d, dtype=dtype, device=device).requires_grad_()
    k = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    v = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    slopes = (torch.rand(b, h) * 0.3).to(device) if alibi else None
    out, lse, probs = flashattn.flash_attn_func(q, k, v, causal=causal, window_size=window, softcap=softcap,
                                                alibi_slopes=slopes, return_attn_probs=True)
    assert probs is None
    assert out.shape == (b, sq, h, d) and lse.shape == (b, h, sq) and lse.dtype == torch.float32
    g = torch.randn_like(out)
    dq, dk, dv = _grads(out, (q, k, v), g)
    kw = dict(causal=causal, window=window, softcap=softcap,
              alibi_slopes=slopes.cpu() if alibi else None)
    (ref, ref_lse, ref_g), (lowp, _, lowp_g) = _ref_and_lowp(q, k, v, g, attention_batched_ref, **kw)
    assert_close_to_ref(out.cpu(), ref, lowp)
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse.cpu()), finite)
    assert max_err(lse.cpu()[finite], ref_lse[finite]) < 1e-3 * max(1.0, ref_lse[finite].abs().max().item())
    for name, got, r, lp in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g, lowp_g):
        assert_close_to_ref(got.cpu(), r, lp, name=name, factor=3.0 if alibi else 2.0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("deterministic", [False, True])
def test_flash_attn_func_mla_head_dims(device, causal, deterministic):
    """(d, dv) = (192, 128), the shape of DeepSeek's multi-head latent attention in training: out and the three
    gradients against the float64 reference, with GQA and sq != sk. The automatic choice: on a Hopper GPU
    cuda_sm90 (its split-column backward and dQ pass), the backward in autograd's device thread too."""
    b, sq, sk, h, hk = 2, 150, 203, 4, 2
    dtype = torch.bfloat16
    q = _rand(b, sq, h, 192, dtype=dtype, device=device).requires_grad_()
    k = _rand(b, sk, hk, 192, dtype=dtype, device=device).requires_grad_()
    v = _rand(b, sk, hk, 128, dtype=dtype, device=device).requires_grad_()
    out = flashattn.flash_attn_func(q, k, v, causal=causal, deterministic=deterministic)
    assert out.shape == (b, sq, h, 128)
    g = torch.randn_like(out)
    dq, dk, dv = _grads(out, (q, k, v), g)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    (ref, _, ref_g), (lowp, _, lowp_g) = _ref_and_lowp(q, k, v, g, attention_batched_ref, causal=causal)
    assert_close_to_ref(out.cpu(), ref, lowp)
    for name, got, r, lp in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g, lowp_g):
        assert_close_to_ref(got.cpu(), r, lp, name=name)


BIAS_CASES = [
    # (bias shape as (B, H, SQ) or None to leave the dim out, kind, causal)
    ((2, 4, 37), "float32", False),
    ((None, 4, 37), "input", True),
    ((None, None, 37), "bool", False),
    ((2, 1, 1), "bool", False),  # a key-padding mask
    ((1, 4, 1), "float32", True),
]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", BIAS_CASES, ids=lambda c: "{}-{}-c{}".format(*c))
def test_attn_bias(device, dtype, case):
    """attn_bias, float (added) and bool (kept where True) in every broadcast form, out, LSE and the gradients
    of q, k and v against the float64 reference. Some keys and one whole row are hidden (output 0, LSE -inf).
    On a Hopper GPU the automatic choice runs the call on cuda_sm80."""
    dims, kind, causal = case
    b, sq, sk, h, hk, d = 2, 37, 53, 4, 2, 64
    q = _rand(b, sq, h, d, dtype=dtype, device=device).requires_grad_()
    k = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    v = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    shape = tuple(n for n in dims if n is not None) + (sk,)
    if kind == "bool":
        bias = torch.rand(shape) < 0.7
        if shape[-2] == sq:
            bias[..., 5, :] = False  # query row 5 sees no key
        if len(shape) == 4 and shape[2] == 1:
            bias[0, ..., 40:] = False  # sequence 0's keys past 40 are padding
            bias[1] = False  # sequence 1 hides every key: its rows give 0 and LSE -inf
    else:
        bias = torch.randn(shape) * 2
        bias[torch.rand(shape) < 0.1] = float("-inf")
        if shape[-2] == sq:
            bias[..., 5, :] = float("-inf")  # query row 5 sees no key
        bias = bias.to(torch.float32 if kind == "float32" else dtype)
    out, lse = flashattn.flash_attn_func(q, k, v, causal=causal, attn_bias=bias.to(device), return_lse=True)
    g = torch.randn_like(out)
    dq, dk, dv = _grads(out, (q, k, v), g)
    (ref, ref_lse, ref_g), (lowp, _, lowp_g) = _ref_and_lowp(q, k, v, g, attention_batched_ref, causal=causal,
                                                             bias=bias)
    assert_close_to_ref(out.cpu(), ref, lowp)
    finite = torch.isfinite(ref_lse)
    if shape[-2] == sq or kind == "bool":
        assert not finite.all(), "the case hides every key of some rows"
    assert torch.equal(torch.isfinite(lse.cpu()), finite)
    assert max_err(lse.cpu()[finite], ref_lse[finite]) < 1e-3 * max(1.0, ref_lse[finite].abs().max().item())
    for name, got, r, lp in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g, lowp_g):
        assert torch.isfinite(got).all(), name
        assert_close_to_ref(got.cpu(), r, lp, name=name)


def test_attn_bias_errors(device):
    q = _rand(2, 8, 2, 32, dtype=torch.bfloat16, device=device)
    k = v = _rand(2, 9, 2, 32, dtype=torch.bfloat16, device=device)
    with pytest.raises(ValueError, match="options.bias: shape"):
        flashattn.flash_attn_func(q, k, v, attn_bias=torch.zeros(8, 8, device=device))
    with pytest.raises(TypeError, match="attn_bias: dtype"):
        flashattn.flash_attn_func(q, k, v, attn_bias=torch.zeros(8, 9, dtype=torch.int64, device=device))
    with pytest.raises(ValueError, match="options.bias: dtype fp16"):
        flashattn.flash_attn_func(q, k, v, attn_bias=torch.zeros(8, 9, dtype=torch.float16, device=device))
    learned = torch.zeros(8, 9, device=device, requires_grad=True)
    with pytest.raises(ValueError, match="attn_bias: requires_grad"):
        flashattn.flash_attn_func(q, k, v, attn_bias=learned)
    out = flashattn.flash_attn_func(q, k, v, attn_bias=learned.detach())  # a constant: fine
    # A zero bias changes the result only by the rounding of a kernel that adds it (the general one).
    assert max_err(out, flashattn.flash_attn_func(q, k, v)) < 1e-2


def test_float32_inputs(device):
    if device.type == "cuda":
        pytest.skip("float32 is a CPU-backend dtype")
    q, k, v = (torch.randn(2, 19, 2, 16, requires_grad=True) for _ in range(3))
    out = flashattn.flash_attn_func(q, k, v, causal=True)
    ref, _ = attention_batched_ref(q.detach().double(), k.detach().double(), v.detach().double(), causal=True)
    assert max_err(out, ref) < 1e-5
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


def test_non_contiguous_inputs_read_through_strides(device):
    b, s, h, d = 2, 24, 4, 32
    base = _rand(b, h, s, d, dtype=torch.bfloat16, device=device)
    q = base.transpose(1, 2)  # (b, s, h, d) with non-standard strides
    assert not q.is_contiguous()
    kv = _rand(b, s, 2, h, d, dtype=torch.bfloat16, device=device)
    k, v = kv.unbind(2)
    out = flashattn.flash_attn_func(q, k, v, causal=True)
    expected = flashattn.flash_attn_func(q.contiguous(), k.contiguous(), v.contiguous(), causal=True)
    assert torch.equal(out, expected)


def test_packed_variants_match_unpacked(device):
    b, s, h, d = 2, 21, 4, 32
    dtype = torch.float16
    qkv = _rand(b, s, 3, h, d, dtype=dtype, device=device).requires_grad_()
    out = flashattn.flash_attn_qkvpacked_func(qkv, causal=True)
    q, k, v = qkv.detach().unbind(2)
    assert torch.equal(out, flashattn.flash_attn_func(q, k, v, causal=True))
    out.sum().backward()
    assert qkv.grad.shape == qkv.shape and torch.isfinite(qkv.grad).all()

    q = _rand(b, s, h, d, dtype=dtype, device=device)
    kv = _rand(b, s + 3, 2, 2, d, dtype=dtype, device=device)
    out = flashattn.flash_attn_kvpacked_func(q, kv)
    assert torch.equal(out, flashattn.flash_attn_func(q, kv[:, :, 0], kv[:, :, 1]))

    # FlashAttention 3's GQA packing: (b, s, h + 2 hk, d) with num_heads_q.
    packed = _rand(b, s, 4 + 2 * 2, d, dtype=dtype, device=device)
    out = flashattn.flash_attn_qkvpacked_func(packed, num_heads_q=4)
    assert torch.equal(out, flashattn.flash_attn_func(packed[:, :, :4], packed[:, :, 4:6], packed[:, :, 6:]))


def test_learnable_sink_forward_and_grad(device):
    b, sq, sk, h, hk, d = 2, 13, 29, 4, 2, 32
    dtype = torch.bfloat16
    q = _rand(b, sq, h, d, dtype=dtype, device=device).requires_grad_()
    k = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    v = _rand(b, sk, hk, d, dtype=dtype, device=device).requires_grad_()
    sink = torch.randn(h, device=device).requires_grad_()
    out, lse = flashattn.flash_attn_func(q, k, v, causal=True, learnable_sink=sink, return_lse=True)
    g = torch.randn_like(out)
    dq, dk, dv, dsink = _grads(out, (q, k, v, sink), g)
    (ref, ref_lse, ref_g), (lowp, _, lowp_g) = _ref_and_lowp(q, k, v, g, attention_batched_ref, causal=True,
                                                             sink=sink)
    assert_close_to_ref(out.cpu(), ref, lowp)
    assert max_err(lse.cpu(), ref_lse) < 1e-3 * max(1.0, ref_lse.abs().max().item())
    for name, got, r, lp in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g[:3], lowp_g[:3]):
        assert_close_to_ref(got.cpu(), r, lp, name=name)
    assert dsink is not None and dsink.shape == sink.shape
    assert max_err(dsink.cpu(), ref_g[3]) <= 2 * max_err(lowp_g[3], ref_g[3]) + 1e-2 * max(
        1.0, ref_g[3].abs().max().item())


def test_dropout_matches_philox_mask(device):
    b, sq, sk, h, d, p = 2, 23, 41, 4, 32, 0.17
    dtype = torch.float16
    q = _rand(b, sq, h, d, dtype=dtype, device=device).requires_grad_()
    k = _rand(b, sk, h, d, dtype=dtype, device=device).requires_grad_()
    v = _rand(b, sk, h, d, dtype=dtype, device=device).requires_grad_()
    out, lse, rng_state = _ops.fwd(q, k, v, None, False, -1, -1, 0.0, None, p, None, False, 0)
    assert rng_state.device.type == "cpu"
    seed, offset = rng_state.tolist()
    keep = torch.stack([
        torch.stack([dropout_keep_mask(seed, offset, p, bb * h + hh, sq, sk) for hh in range(h)]) for bb in range(b)
    ])
    dropped = 1 - keep.double().mean().item()
    assert abs(dropped - p) < 0.03
    g = torch.randn_like(out)
    dq, dk, dv = _grads(out, (q, k, v), g)
    (ref, _, ref_g), (lowp, _, lowp_g) = _ref_and_lowp(q, k, v, g, attention_batched_ref, dropout_p=p,
                                                       keep_mask=keep)
    assert_close_to_ref(out.cpu(), ref, lowp)
    for name, got, r, lp in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g, lowp_g):
        assert_close_to_ref(got.cpu(), r, lp, name=name)
    # The public function draws a fresh pair each call: same seed -> same result.
    torch.manual_seed(1)
    a = flashattn.flash_attn_func(q, k, v, dropout_p=p)
    torch.manual_seed(1)
    b2 = flashattn.flash_attn_func(q, k, v, dropout_p=p)
    assert torch.equal(a, b2)


# ----------------------------------------------------------------------------------------
# Variable length.


def _cu(lengths, device):
    return torch.tensor([0] + list(torch.tensor(lengths).cumsum(0).tolist()), dtype=torch.int32, device=device)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("max_seqlen_as_tensor", [False, True])
def test_varlen_with_empty_sequences(device, causal, max_seqlen_as_tensor):
    lens_q = [5, 0, 17, 1, 9]
    lens_k = [7, 3, 17, 0, 30]
    h, hk, d = 4, 2, 32
    dtype = torch.bfloat16
    q = _rand(sum(lens_q), h, d, dtype=dtype, device=device).requires_grad_()
    k = _rand(sum(lens_k), hk, d, dtype=dtype, device=device).requires_grad_()
    v = _rand(sum(lens_k), hk, d, dtype=dtype, device=device).requires_grad_()
    cu_q, cu_k = _cu(lens_q, device), _cu(lens_k, device)
    max_q, max_k = max(lens_q), max(lens_k)
    if max_seqlen_as_tensor:
        max_q, max_k = torch.tensor(max_q, device=device), torch.tensor(max_k, device=device)
    out, lse, _ = flashattn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=causal,
                                                   return_attn_probs=True)
    assert out.shape == (sum(lens_q), h, d) and lse.shape == (h, sum(lens_q))
    g = torch.randn_like(out)
    dq, dk, dv = _grads(out, (q, k, v), g)
    cq, ck = cu_q.tolist(), cu_k.tolist()
    for s in range(len(lens_q)):
        rq, rk = slice(cq[s], cq[s + 1]), slice(ck[s], ck[s + 1])
        if lens_q[s] == 0:
            continue
        results = []
        for upcast in (True, False):
            ins = [t.detach().cpu()[r].to(torch.float64 if upcast else dtype).requires_grad_()
                   for t, r in ((q, rq), (k, rk), (v, rk))]
            o, l = attention_ref(*ins, causal=causal, upcast=upcast, reorder_ops=not upcast)
            gr = torch.autograd.grad(o, ins, g.cpu()[rq].to(o.dtype))
            results.append((o, l, gr))
        (ref, ref_lse, ref_g), (lowp, _, lowp_g) = results
        assert_close_to_ref(out.cpu()[rq], ref, lowp, name=f"out[seq {s}]")
        if lens_k[s] == 0:
            assert torch.all(out.cpu()[rq] == 0) and torch.all(lse.cpu()[:, rq] == float("-inf"))
        for name, got, r, lp, rows in zip(("dq", "dk", "dv"), (dq, dk, dv), ref_g, lowp_g, (rq, rk, rk)):
            assert_close_to_ref(got.cpu()[rows], r, lp, name=f"{name}[seq {s}]")


def test_varlen_seqused(device):
    lens = [9, 14, 6]
    used_q, used_k = [4, 14, 0], [9, 3, 6]
    h, d = 2, 32
    dtype = torch.float16
    q = _rand(sum(lens), h, d, dtype=dtype, device=device)
    k = _rand(sum(lens), h, d, dtype=dtype, device=device)
    v = _rand(sum(lens), h, d, dtype=dtype, device=device)
    cu = _cu(lens, device)
    sq_used = torch.tensor(used_q, dtype=torch.int32, device=device)
    sk_used = torch.tensor(used_k, dtype=torch.int32, device=device)
    out = flashattn.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens), seqused_q=sq_used,
                                           seqused_k=sk_used)
    c = cu.tolist()
    for s in range(len(lens)):
        if used_q[s] == 0:
            assert torch.all(out.cpu()[c[s]:c[s + 1]] == 0)
            continue
        rq, rk = slice(c[s], c[s] + used_q[s]), slice(c[s], c[s] + used_k[s])
        ref, _ = attention_ref(q.cpu()[rq].double(), k.cpu()[rk].double(), v.cpu()[rk].double())
        lowp, _ = attention_ref(q.cpu()[rq], k.cpu()[rk], v.cpu()[rk], upcast=False, reorder_ops=True)
        assert_close_to_ref(out.cpu()[rq], ref, lowp)
        assert torch.all(out.cpu()[c[s] + used_q[s]:c[s + 1]] == 0)


@pytest.mark.parametrize("page_size", [1, 4, 16])
def test_varlen_paged(device, page_size):
    lens_q, lens_k = [3, 1, 8], [10, 33, 8]
    h, hk, d = 4, 1, 32
    dtype = torch.bfloat16
    pages_per_seq = max(math.ceil(l / page_size) for l in lens_k)
    num_blocks = pages_per_seq * len(lens_k) + 3
    k_pages = _rand(num_blocks, page_size, hk, d, dtype=dtype, device=device)
    v_pages = _rand(num_blocks, page_size, hk, d, dtype=dtype, device=device)
    table = torch.randperm(num_blocks)[: len(lens_k) * pages_per_seq].reshape(len(lens_k), pages_per_seq)
    table = table.to(torch.int32).to(device)
    q = _rand(sum(lens_q), h, d, dtype=dtype, device=device)
    out = flashattn.flash_attn_varlen_func(q, k_pages, v_pages, _cu(lens_q, device), _cu(lens_k, device), max(lens_q),
                                           max(lens_k), causal=True, page_table=table)
    cq = _cu(lens_q, "cpu").tolist()
    for s in range(len(lens_q)):
        rows = table[s].cpu().long()
        k_seq = k_pages.cpu()[rows].reshape(-1, hk, d)[: lens_k[s]]
        v_seq = v_pages.cpu()[rows].reshape(-1, hk, d)[: lens_k[s]]
        qs = q.cpu()[cq[s]:cq[s + 1]]
        ref, _ = attention_ref(qs.double(), k_seq.double(), v_seq.double(), causal=True)
        lowp, _ = attention_ref(qs, k_seq, v_seq, causal=True, upcast=False, reorder_ops=True)
        assert_close_to_ref(out.cpu()[cq[s]:cq[s + 1]], ref, lowp)


def test_varlen_packed_variants(device):
    lens = [7, 12]
    h, d = 2, 32
    dtype = torch.float16
    cu = _cu(lens, device)
    qkv = _rand(sum(lens), 3, h, d, dtype=dtype, device=device).requires_grad_()
    out = flashattn.flash_attn_varlen_qkvpacked_func(qkv, cu, max(lens), causal=True)
    q, k, v = qkv.detach().unbind(1)
    assert torch.equal(out, flashattn.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens), causal=True))
    out.sum().backward()
    assert torch.isfinite(qkv.grad).all()
    kv = _rand(sum(lens), 2, h, d, dtype=dtype, device=device)
    out = flashattn.flash_attn_varlen_kvpacked_func(q, kv, cu, cu, max(lens), max(lens))
    assert torch.equal(out, flashattn.flash_attn_varlen_func(q, kv[:, 0], kv[:, 1], cu, cu, max(lens), max(lens)))


# ----------------------------------------------------------------------------------------
# KV cache.


def _kvcache_case(device, *, paged, rotary_fraction, interleaved, causal, leftpad, batch_idx, s_new, dtype):
    b, sq, h, hk, d, s_cache = 3, 2, 4, 2, 32, 40
    q = _rand(b, sq, h, d, dtype=dtype, device=device)
    seqlens = torch.tensor([5, 17, 0], dtype=torch.int32)
    k_new = _rand(b, s_new, hk, d, dtype=dtype, device=device) if s_new else None
    v_new = _rand(b, s_new, hk, d, dtype=dtype, device=device) if s_new else None
    rotary_dim = int(d * rotary_fraction) // 2 * 2
    cos = sin = None
    if rotary_dim:
        angle = torch.rand(s_cache + 8, rotary_dim // 2) * 2 * math.pi
        cos, sin = angle.cos().to(dtype).to(device), angle.sin().to(dtype).to(device)
    pad = torch.tensor([2, 0, 0], dtype=torch.int32) if leftpad else None
    if pad is not None:
        seqlens = torch.maximum(seqlens, pad)
    cache_rows = torch.tensor([2, 0, 1]) if batch_idx else torch.arange(b)
    if paged:
        page = 8
        pages = s_cache // page
        k_cache = _rand(b * pages + 2, page, hk, d, dtype=dtype, device=device)
        v_cache = _rand(b * pages + 2, page, hk, d, dtype=dtype, device=device)
        table = torch.randperm(b * pages + 2)[: b * pages].reshape(b, pages).to(torch.int32)
        dense_k = k_cache.cpu()[table.long()].reshape(b, s_cache, hk, d)
        dense_v = v_cache.cpu()[table.long()].reshape(b, s_cache, hk, d)
    else:
        k_cache = _rand(b, s_cache, hk, d, dtype=dtype, device=device)
        v_cache = _rand(b, s_cache, hk, d, dtype=dtype, device=device)
        table = None
        dense_k, dense_v = k_cache.cpu()[cache_rows].clone(), v_cache.cpu()[cache_rows].clone()
    out, lse = flashattn.flash_attn_with_kvcache(
        q, k_cache, v_cache, k=k_new, v=v_new, rotary_cos=cos, rotary_sin=sin,
        cache_seqlens=seqlens.to(device), cache_batch_idx=cache_rows.to(torch.int32).to(device) if batch_idx else None,
        cache_leftpad=pad.to(device) if pad is not None else None,
        page_table=table.to(device) if table is not None else None, causal=causal, rotary_interleaved=interleaved,
        return_softmax_lse=True)
    assert out.shape == (b, sq, h, d) and lse.shape == (b, h, sq)
    for s in range(b):
        start = int(pad[s]) if pad is not None else 0
        end = int(seqlens[s])
        ks, vs = dense_k[s, start:end], dense_v[s, start:end]
        qs = q.cpu()[s]
        if s_new:
            kn, vn = k_new.cpu()[s], v_new.cpu()[s]
            if rotary_dim:
                kn = apply_rotary_ref(kn, cos.cpu(), sin.cpu(), torch.arange(end, end + s_new), interleaved)
            ks, vs = torch.cat([ks, kn]), torch.cat([vs, vn])
            # The cache now holds the (rotated) new keys and the new values.
            if paged:
                got_k = k_cache.cpu()[table[s].long()].reshape(s_cache, hk, d)[end:end + s_new]
                got_v = v_cache.cpu()[table[s].long()].reshape(s_cache, hk, d)[end:end + s_new]
            else:
                got_k = k_cache.cpu()[cache_rows[s], end:end + s_new]
                got_v = v_cache.cpu()[cache_rows[s], end:end + s_new]
            assert torch.allclose(got_k.float(), kn.float(), atol=2e-2, rtol=1e-2)
            assert torch.equal(got_v, vn)
        if rotary_dim:
            positions = (torch.arange(end, end + sq) if causal else torch.full((sq,), end))
            qs = apply_rotary_ref(qs, cos.cpu(), sin.cpu(), positions, interleaved)
        ref, _ = attention_ref(qs.double(), ks.double(), vs.double(), causal=causal)
        lowp, _ = attention_ref(qs, ks, vs, causal=causal, upcast=False, reorder_ops=True)
        # Rotary is applied in low precision by both sides: allow for its rounding in atol.
        atol = 5e-2 if rotary_dim else None
        assert_close_to_ref(out.cpu()[s], ref, lowp, name=f"out[seq {s}]", factor=3.0, atol=atol)


@pytest.mark.parametrize("paged", [False, True])
@pytest.mark.parametrize("s_new", [0, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_kvcache(device, paged, s_new, causal):
    _kvcache_case(device, paged=paged, rotary_fraction=0.0, interleaved=True, causal=causal, leftpad=False,
                  batch_idx=False, s_new=s_new, dtype=torch.float16)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rotary_fraction", [0.5, 1.0])
def test_kvcache_rotary(device, interleaved, rotary_fraction):
    _kvcache_case(device, paged=False, rotary_fraction=rotary_fraction, interleaved=interleaved, causal=True,
                  leftpad=False, batch_idx=False, s_new=2, dtype=torch.float16)


def test_kvcache_leftpad_and_batch_idx(device):
    _kvcache_case(device, paged=False, rotary_fraction=0.0, interleaved=True, causal=True, leftpad=True,
                  batch_idx=False, s_new=2, dtype=torch.bfloat16)
    _kvcache_case(device, paged=False, rotary_fraction=0.0, interleaved=True, causal=False, leftpad=False,
                  batch_idx=True, s_new=0, dtype=torch.bfloat16)


def test_kvcache_int_seqlens_and_num_splits(device):
    b, h, d, s_cache = 2, 4, 32, 64
    q = _rand(b, 1, h, d, dtype=torch.float16, device=device)
    kc = _rand(b, s_cache, h, d, dtype=torch.float16, device=device)
    vc = _rand(b, s_cache, h, d, dtype=torch.float16, device=device)
    a = flashattn.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=50, num_splits=1)
    c = flashattn.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=50, num_splits=4)
    ref = flashattn.flash_attn_func(q, kc[:, :50], vc[:, :50])
    assert max_err(a, ref) < 2e-3 and max_err(c, ref) < 2e-3


@pytest.mark.parametrize("varlen", [False, True])
def test_num_splits_one_is_batch_invariant(device, varlen):
    # flash_attn_func / flash_attn_varlen_func with num_splits=1 split no keys, so a sequence's result does not
    # depend on the batch beside it (a decode step: 8 sequences, GQA 32/8 over 2048 keys); num_splits=0 (the
    # default) lets the library split. Sequence 0 alone and in the batch, bitwise.
    b, h, hk, d, sk = 8, 32, 8, 128, 2048
    q = _rand(b, 1, h, d, dtype=torch.bfloat16, device=device)
    k = _rand(b, sk, hk, d, dtype=torch.bfloat16, device=device)
    v = _rand(b, sk, hk, d, dtype=torch.bfloat16, device=device)

    def run(n):
        if not varlen:
            return flashattn.flash_attn_func(q[:n], k[:n], v[:n], num_splits=1)
        cu_q = torch.arange(0, n + 1, dtype=torch.int32, device=device)
        cu_k = cu_q * sk
        return flashattn.flash_attn_varlen_func(q[:n].reshape(n, h, d), k[:n].reshape(n * sk, hk, d),
                                                v[:n].reshape(n * sk, hk, d), cu_q, cu_k, 1, sk,
                                                num_splits=1).reshape(n, 1, h, d)

    assert torch.equal(run(1)[0], run(b)[0])
    ref = flashattn.flash_attn_func(q, k, v)
    assert max_err(run(b), ref) < 2e-2
    with pytest.raises(ValueError, match="num_splits: -1"):
        flashattn.flash_attn_func(q, k, v, num_splits=-1)


# ----------------------------------------------------------------------------------------
# Combine.


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
def test_combine(device, out_dtype):
    splits, b, s, h, dv = 5, 2, 7, 3, 32
    out_partial = torch.randn(splits, b, s, h, dv, device=device)
    lse_partial = torch.randn(splits, b, s, h, device=device) * 3
    lse_partial[1] = float("-inf")
    lse_partial[:, 0, 0, 0] = float("-inf")  # a row with every split empty
    out, lse = flashattn.flash_attn_combine(out_partial, lse_partial, out_dtype=out_dtype)
    assert out.shape == (b, s, h, dv) and out.dtype == out_dtype and lse.shape == (b, s, h)
    lp = lse_partial.cpu().double()
    ref_lse = torch.logsumexp(lp, dim=0)
    weights = torch.exp(lp - ref_lse).nan_to_num(0.0)
    ref = (weights[..., None] * out_partial.cpu().double()).sum(0)
    assert torch.all(out.cpu()[0, 0, 0] == 0) and lse.cpu()[0, 0, 0] == float("-inf")
    tol = 1e-5 if out_dtype == torch.float32 else 1e-2
    assert max_err(out.cpu(), ref) <= tol * max(1.0, ref.abs().max().item())
    finite = torch.isfinite(ref_lse)
    assert max_err(lse.cpu()[finite], ref_lse[finite]) < 1e-5
