"""The extension's two argument forms: torch.Tensor objects (what flashattn passes) and the plain tuples a caller
without a registered framework builds. Both must describe the same memory, and bad tensors must be named. CPU only:
the forms are read before any backend runs."""

import pytest
import torch

from flashattn import _C

_NAMES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32", torch.int32: "int32"}


def _tuple(t):
    """The tuple form: (address, dtype name, shape, strides in elements, device type, device index)."""
    if t is None:
        return None
    return (t.data_ptr(), _NAMES[t.dtype], tuple(t.shape), tuple(t.stride()), 0, 0)


def _forward_args(q, k, v, out, lse, alibi=None, sink=None, form=lambda t: t):
    return {"q": form(q), "k": form(k), "v": form(v), "out": form(out), "lse": form(lse), "softmax_scale": None,
            "causal": True, "window_left": -1, "window_right": 0, "softcap": 0.0, "alibi_slopes": form(alibi),
            "dropout_p": 0.0, "sink": form(sink)}


def _workspace(nbytes):
    buffer = torch.empty(nbytes + 256, dtype=torch.uint8)
    return buffer, (buffer.data_ptr() + 255) // 256 * 256


def _run(args):
    _C.run("forward", args, "cpu_reference", 0, _workspace, 1)


def test_tensor_objects_and_tuples_reach_the_same_memory():
    # Views with storage offsets and non-contiguous strides (a packed qkv, a transposed k), a size-1 last
    # dimension whose stride PyTorch reports as anything, and the optional tensors.
    b, s, h, d = 2, 24, 3, 16
    qkv = torch.randn(b, s, 3, h, d, dtype=torch.float16)
    q, v = qkv[:, :, 0], qkv[:, :, 2]
    k = torch.randn(b, h, s, d, dtype=torch.float16).transpose(1, 2)
    alibi = torch.rand(b, h, dtype=torch.float32)
    sink = torch.randn(h, dtype=torch.float32)
    outs = []
    for form in (lambda t: t, _tuple):
        out = torch.full((b, s, h, d), float("nan"), dtype=torch.float16)
        lse = torch.full((b, h, s), float("nan"), dtype=torch.float32)
        _run(_forward_args(q, k, v, out, lse, alibi, sink, form))
        outs.append((out, lse))
    assert not outs[0][0].isnan().any() and not outs[0][1].isnan().any()
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    # The kernel choice reads the same shapes from both forms.
    tensors = _forward_args(q, k, v, outs[0][0], outs[0][1], alibi, sink)
    tuples = _forward_args(q, k, v, outs[0][0], outs[0][1], alibi, sink, _tuple)
    assert _C.select_kernel("forward", tensors, "auto") == _C.select_kernel("forward", tuples, "auto")
    # A size-1 last dimension's stride is meaningless, and PyTorch reports anything there: the extension reads
    # it as contiguous, where the tuple form's stride is taken as given (and refused by the unit-stride check).
    q1, out1 = q[:, :1], torch.empty(b, 1, h, d, dtype=torch.float16)
    lse_1 = torch.empty(b * h * 4, dtype=torch.float32).as_strided((b, h, 1), (h * 4, 4, 3))
    assert lse_1.stride(-1) == 3
    assert _C.select_kernel("forward", _forward_args(q1, k, v, out1, lse_1), "cpu_reference")[0]
    with pytest.raises(ValueError, match="lse: last-dim stride 3"):
        _C.select_kernel("forward", _forward_args(q1, k, v, out1, lse_1, form=_tuple), "cpu_reference")


@pytest.mark.parametrize("case", ["list", "float64", "meta", "zero_dim", "too_many_dims"])
def test_bad_tensors_are_named(case):
    q = torch.randn(1, 8, 2, 16, dtype=torch.float16)
    out, lse = torch.empty_like(q), torch.empty(1, 2, 8, dtype=torch.float32)
    bad, error, pattern = {
        "list": ([1, 2], TypeError, "k: expected a torch.Tensor or None, got list"),
        "float64": (q.double(), TypeError, "k: dtype torch.float64 is not supported by flashattn"),
        "meta": (q.to("meta"), ValueError, "k: device meta is not supported"),
        "zero_dim": (torch.tensor(1.0, dtype=torch.float16), ValueError, "k: expected at least one dimension"),
        "too_many_dims": (q.reshape(1, 1, 1, 1, 8, 2, 16), ValueError, "k: rank 7 is outside 1..5"),
    }[case]
    with pytest.raises(error, match=pattern):
        _C.select_kernel("forward", _forward_args(q, bad, q, out, lse), "cpu_reference")
    # The caller's names where they differ from the library's fields.
    with pytest.raises(TypeError, match="learnable_sink: dtype torch.float64"):
        _C.select_kernel("forward", _forward_args(q, q, q, out, lse, sink=torch.zeros(2, dtype=torch.float64)),
                         "cpu_reference")
