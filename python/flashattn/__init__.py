"""flashattn: exact attention of the FlashAttention family.

The C++ library is reached through flashattn._C, which has no PyTorch dependency; the
PyTorch interface (a drop-in for flash_attn's) is imported here when PyTorch is present.
"""

from . import _C

__version__ = _C.version()
UnsupportedError = _C.UnsupportedError


def backend_compiled(name: str) -> bool:
    """True when backend `name` (cpu_reference, cpu_tiled, cuda_sm80, cuda_sm90) is in this build."""
    return _C.backend_compiled(name)


def cuda_device_count() -> int:
    """CUDA devices the library sees (0 when built without CUDA or without a driver)."""
    return _C.cuda_device_count()


try:
    import torch as _torch  # noqa: F401
except ImportError:  # the extension alone is usable without PyTorch
    _torch = None

if _torch is not None:
    from ._runtime import current_backend, use_backend
    from .interface import (
        flash_attn_combine,
        flash_attn_func,
        flash_attn_kvpacked_func,
        flash_attn_qkvpacked_func,
        flash_attn_varlen_func,
        flash_attn_varlen_kvpacked_func,
        flash_attn_varlen_qkvpacked_func,
        flash_attn_with_kvcache,
    )
