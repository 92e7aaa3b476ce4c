"""Bad inputs raise ValueError/TypeError naming the argument; nothing crashes."""

import pytest
import torch

import flashattn


def _qkv(b=2, s=16, h=4, hk=4, d=32, dtype=torch.float16):
    return (torch.randn(b, s, h, d, dtype=dtype), torch.randn(b, s, hk, d, dtype=dtype),
            torch.randn(b, s, hk, d, dtype=dtype))


def test_dtype_errors_are_type_errors():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="k: dtype"):
        flashattn.flash_attn_func(q, k.to(torch.bfloat16), v)
    with pytest.raises(TypeError, match="q: dtype"):
        flashattn.flash_attn_func(q.to(torch.float64), k, v)
    with pytest.raises(TypeError, match="q: expected a torch.Tensor"):
        flashattn.flash_attn_func([1, 2], k, v)
    cu = torch.tensor([0, 16], dtype=torch.int64)
    with pytest.raises(TypeError, match="cu_seqlens_q: dtype"):
        flashattn.flash_attn_varlen_func(q[0], k[0], v[0], cu, cu.int(), 16, 16)
    with pytest.raises(TypeError, match="alibi_slopes"):
        flashattn.flash_attn_func(q, k, v, alibi_slopes=torch.ones(4, dtype=torch.float16))


def test_last_dim_must_be_contiguous():
    q, k, v = _qkv()
    q_t = torch.randn(2, 16, 32, 4, dtype=torch.float16).transpose(2, 3)
    with pytest.raises(ValueError, match="q: the last dimension must be contiguous"):
        flashattn.flash_attn_func(q_t, k, v)


@pytest.mark.parametrize("case", ["heads", "head_dim", "batch", "rank", "window"])
def test_library_validation_messages_name_the_argument(case):
    q, k, v = _qkv()
    if case == "heads":
        k, v = torch.randn(2, 16, 3, 32, dtype=torch.float16), torch.randn(2, 16, 3, 32, dtype=torch.float16)
        pattern = r"\bk\b|heads"
    elif case == "head_dim":
        k = torch.randn(2, 16, 4, 40, dtype=torch.float16)
        pattern = r"\bk\b"
    elif case == "batch":
        v = torch.randn(3, 16, 4, 32, dtype=torch.float16)
        pattern = r"\bv\b"
    elif case == "rank":
        q = torch.randn(16, 4, 32, dtype=torch.float16)
        pattern = r"\bq\b"
    else:
        with pytest.raises(ValueError, match="window"):
            flashattn.flash_attn_func(q, k, v, window_size=(-5, 2))
        return
    with pytest.raises(ValueError, match=pattern):
        flashattn.flash_attn_func(q, k, v)


def test_kvcache_argument_errors():
    q = torch.randn(2, 1, 4, 32, dtype=torch.float16)
    kc = torch.randn(2, 64, 4, 32, dtype=torch.float16)
    vc = torch.randn(2, 64, 4, 32, dtype=torch.float16)
    with pytest.raises(ValueError, match="k/v"):
        flashattn.flash_attn_with_kvcache(q, kc, vc, k=torch.randn(2, 1, 4, 32, dtype=torch.float16))
    with pytest.raises(ValueError, match="cache_seqlens"):
        kn = torch.randn(2, 1, 4, 32, dtype=torch.float16)
        flashattn.flash_attn_with_kvcache(q, kc, vc, k=kn, v=kn.clone())
    table = torch.zeros(2, 4, dtype=torch.int32)
    with pytest.raises(ValueError, match="page_table"):
        flashattn.flash_attn_with_kvcache(q, kc, vc, block_table=table, page_table=table.clone())


def test_paged_varlen_refuses_backward():
    q = torch.randn(8, 2, 32, dtype=torch.float16, requires_grad=True)
    kp = torch.randn(4, 4, 2, 32, dtype=torch.float16)
    cu = torch.tensor([0, 8], dtype=torch.int32)
    with pytest.raises(ValueError, match="block_table"):
        flashattn.flash_attn_varlen_func(q, kp, kp, cu, cu, 8, 8, block_table=torch.zeros(1, 2, dtype=torch.int32))


def test_unknown_backend_is_a_value_error():
    q, k, v = _qkv()
    with flashattn.use_backend("no_such_backend"):
        with pytest.raises(ValueError, match="backend"):
            flashattn.flash_attn_func(q, k, v)


def test_empty_batch_and_empty_keys():
    q, k, v = _qkv(b=0)
    out = flashattn.flash_attn_func(q, k, v)
    assert out.shape == (0, 16, 4, 32)
    q = torch.randn(2, 5, 4, 32, dtype=torch.float16)
    k = torch.randn(2, 0, 4, 32, dtype=torch.float16)
    out, lse, _ = flashattn.flash_attn_func(q, k, k, return_attn_probs=True)
    assert torch.all(out == 0) and torch.all(lse == float("-inf"))
