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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On CUDA (a test parametrised with a CUDA device, named for CUDA or marked requires_cuda), a
    request the compiled CUDA backends cannot run yet (a head dim or dtype left out of a
    restricted build, kernels not written yet) is reported as skipped with the library's
    reason, so the GPU summary separates "not available" from "wrong". On the CPU it fails."""
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    on_cuda = (str(params.get("device", "")).startswith("cuda") or "cuda" in item.name
               or any(mark == requires_cuda.mark for mark in item.iter_markers(name="skipif")))
    if (call.when == "call" and call.excinfo is not None and on_cuda
            and call.excinfo.errisinstance(flashattn.UnsupportedError)):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0,
                           "Skipped: unsupported on CUDA in this build: " + str(call.excinfo.value)[:300])
