import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(__file__))

import flashattn  # noqa: E402


def _cuda_usable() -> bool:
    return (torch.cuda.is_available() and flashattn._C.with_cuda() and flashattn.cuda_device_count() > 0)


CUDA_SKIP_REASON = ("no CUDA device" if not torch.cuda.is_available() else
                    "flashattn built without CUDA backends" if not flashattn._C.with_cuda() else "")

DEVICES = ["cpu"] + (["cuda"] if _cuda_usable() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return torch.device(request.param)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


requires_cuda = pytest.mark.skipif(not _cuda_usable(), reason=CUDA_SKIP_REASON or "CUDA not usable")
