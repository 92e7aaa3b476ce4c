"""PyTorch <-> flashattn._C plumbing: the tensor type, device guard, stream, workspace.

The extension never links against PyTorch: it reads the torch.Tensor objects it is given through
their Python attributes (data pointer, dtype, shape, strides, device), having been told at import
which class and dtypes those are. Everything that allocates (outputs, workspace) lives here, on the
torch side, on the inputs' device and the current stream of that device.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from typing import Optional

import torch

from . import _C

_DTYPE_NAMES = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.int32: "int32",
    torch.bool: "bool",
}
# Tensors cross into the extension as they are (nn.Parameter and other subclasses included); it
# checks each one's dtype against these and names the argument when it is not a tensor.
_C.register_tensor_type(torch.Tensor, "torch.Tensor", _DTYPE_NAMES)

# The library requires 256-byte aligned scratch memory.
_WORKSPACE_ALIGN = 256

_state = threading.local()
# use_backend blocks open in any thread: while there are none, no call reads the thread-local state (a
# lookup that costs more than the rest of current_backend).
_overrides_open = 0
_overrides_lock = threading.Lock()


# Read once, at import: os.environ costs microseconds per lookup, on every call.
_DEFAULT_BACKEND = os.environ.get("FLASHATTN_BACKEND", "auto")


def current_backend() -> str:
    """The backend flashattn calls use in this thread ("auto" unless overridden)."""
    if not _overrides_open:
        return _DEFAULT_BACKEND
    return getattr(_state, "backend", None) or _DEFAULT_BACKEND


@contextlib.contextmanager
def use_backend(name: str):
    """Run the enclosed flashattn calls on a named backend.

    One of "auto", "cpu_reference", "cpu_tiled", "cuda_sm80", "cuda_sm90". The
    FLASHATTN_BACKEND environment variable, read when flashattn is imported, sets the default.
    """
    global _overrides_open
    previous = getattr(_state, "backend", None)
    _state.backend = name
    with _overrides_lock:
        _overrides_open += 1
    try:
        yield
    finally:
        _state.backend = previous
        with _overrides_lock:
            _overrides_open -= 1


def check_last_dim_contiguous(t: Optional[torch.Tensor], name: str) -> None:
    """flashattn reads every operand through strides but needs a unit-stride last dim."""
    if t is not None and t.dim() > 0 and t.shape[-1] > 1 and t.stride(-1) != 1:
        raise ValueError(
            f"{name}: the last dimension must be contiguous (stride 1), got strides {tuple(t.stride())} "
            f"for shape {tuple(t.shape)}; other dimensions may have any stride")


def _aligned_workspace(nbytes: int, device: torch.device):
    if nbytes == 0:
        return None, 0
    buffer = torch.empty(nbytes + _WORKSPACE_ALIGN, dtype=torch.uint8, device=device)
    address = buffer.data_ptr()
    aligned = (address + _WORKSPACE_ALIGN - 1) // _WORKSPACE_ALIGN * _WORKSPACE_ALIGN
    return buffer, aligned


# The current CUDA stream as a raw handle, without building a torch.cuda.Stream object (a
# private entry point that torch.compile's generated code uses too; the public call where absent).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
# The current device's index without torch.cuda.current_device()'s lazy-initialisation check (this
# runs only for CUDA tensors, so CUDA is initialised): 0.2 against 0.5 us on an H200 host.
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


def _current_stream(index: int) -> int:
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def run(op: str, args: dict, device: torch.device) -> None:
    """Runs one library operation on `device` and its current stream.

    The workspace is a torch allocation on the same stream, so the caching allocator
    reuses it in stream order (safe under CUDA graph capture as well). One call into the
    extension sizes it, requests it through the callback and launches.
    """
    backend = current_backend()
    allocate = functools.partial(_aligned_workspace, device=device)
    if device.type == "cuda":
        current = _current_device()
        index = device.index if device.index is not None else current
        if index == current:
            _C.run(op, args, backend, _current_stream(index), allocate)
        else:
            with torch.cuda.device(index):
                _C.run(op, args, backend, _current_stream(index), allocate)
    else:
        _C.run(op, args, backend, 0, allocate, torch.get_num_threads())


def select_kernel(op: str, args: dict, backend: Optional[str] = None):
    """(ok, backend, kernel, reason) for a call described by `args` (its tensors and options)."""
    return _C.select_kernel(op, args, backend or current_backend())


_SEED_MASK = (1 << 63) - 1


def dropout_seed_offset(device: torch.device) -> torch.Tensor:
    """A fresh (seed, offset) pair for one dropout call, as a CPU int64 tensor of 2.

    Taken from PyTorch's generator of the device without a host-device sync: on CUDA
    the generator's seed and Philox offset (the offset then advances, as PyTorch's own
    random kernels do); on the CPU two draws from the default generator. The pair is
    saved for backward, which regenerates the same mask. Under CUDA graph capture the
    pair is fixed at capture time, so every replay drops the same elements.
    """
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        generator = torch.cuda.default_generators[index]
        try:
            offset = generator.get_offset()
            generator.set_offset(offset + 4)
            return torch.tensor([generator.initial_seed() & _SEED_MASK, offset], dtype=torch.int64)
        except (RuntimeError, AttributeError):
            pass  # older PyTorch: fall back to the CPU generator below
    return torch.randint(0, 1 << 62, (2,), dtype=torch.int64)
