"""flashattn.modules.MHA: projections + rotary + attention, and KV-cache decoding."""

import pytest
import torch

from flashattn.modules import MHA, InferenceParams
from reference import attention_batched_ref, max_err


def _mha_ref(mha: MHA, x: torch.Tensor) -> torch.Tensor:
    """The same layer in float64 PyTorch."""
    b, s, _ = x.shape
    x64 = x.detach().cpu().double()
    w, bias = mha.Wqkv.weight.detach().cpu().double(), mha.Wqkv.bias.detach().cpu().double()
    qkv = x64 @ w.T + bias
    q_size = mha.num_heads * mha.head_dim
    q = qkv[..., :q_size].view(b, s, mha.num_heads, mha.head_dim)
    kv = qkv[..., q_size:].view(b, s, 2, mha.num_heads_kv, mha.head_dim)
    k, v = kv[:, :, 0], kv[:, :, 1]
    if mha.rotary_emb is not None:
        q, k = mha.rotary_emb.rotate(q), mha.rotary_emb.rotate(k)
    out, _ = attention_batched_ref(q, k, v, causal=mha.causal)
    return (out.reshape(b, s, -1) @ mha.out_proj.weight.detach().cpu().double().T +
            mha.out_proj.bias.detach().cpu().double())


@pytest.mark.parametrize("heads_kv", [4, 2])
@pytest.mark.parametrize("rotary", [0, 8])
def test_mha_matches_reference(device, heads_kv, rotary):
    torch.manual_seed(0)
    mha = MHA(64, 4, num_heads_kv=heads_kv, causal=True, rotary_emb_dim=rotary, device=device, dtype=torch.bfloat16)
    x = torch.randn(2, 19, 64, device=device, dtype=torch.bfloat16, requires_grad=True)
    out = mha(x)
    ref = _mha_ref(mha, x.detach())
    assert out.shape == x.shape
    assert max_err(out.cpu(), ref) < 0.05 * max(1.0, ref.abs().max().item())
    out.float().pow(2).mean().backward()
    assert torch.isfinite(x.grad).all() and torch.isfinite(mha.Wqkv.weight.grad).all()


@pytest.mark.parametrize("rotary", [0, 16])
def test_mha_decoding_matches_full_forward(device, rotary):
    torch.manual_seed(0)
    dtype = torch.float16
    mha = MHA(64, 4, num_heads_kv=2, causal=True, rotary_emb_dim=rotary, rotary_emb_interleaved=False, layer_idx=0,
              device=device, dtype=dtype).eval()
    b, prompt, steps = 2, 7, 4
    x = torch.randn(b, prompt + steps, 64, device=device, dtype=dtype)
    with torch.no_grad():
        full = mha(x)
        params = InferenceParams(max_seqlen=32, max_batch_size=b)
        outs = [mha(x[:, :prompt], inference_params=params)]
        params.seqlen_offset = prompt
        for t in range(steps):
            outs.append(mha(x[:, prompt + t:prompt + t + 1], inference_params=params))
            params.seqlen_offset += 1
    decoded = torch.cat(outs, dim=1)
    assert max_err(decoded, full) < 2e-2


def test_mha_varlen(device):
    mha = MHA(32, 2, causal=True, device=device, dtype=torch.float16)
    lens = [5, 11]
    x = torch.randn(sum(lens), 32, device=device, dtype=torch.float16)
    cu = torch.tensor([0, 5, 16], dtype=torch.int32, device=device)
    out = mha(x, cu_seqlens=cu, max_seqlen=11)
    for start, n in ((0, 5), (5, 11)):
        single = mha(x[start:start + n][None])[0]
        assert max_err(out[start:start + n], single) < 2e-3


def test_mha_rejects_unknown_arguments():
    with pytest.raises(ValueError, match="fused_bias_fc"):
        MHA(32, 2, fused_bias_fc=True)
