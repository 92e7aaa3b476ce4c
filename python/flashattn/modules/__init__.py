"""nn.Module layers on flashattn (like flash_attn.modules)."""

from .mha import MHA, InferenceParams, RotaryEmbedding

__all__ = ["MHA", "InferenceParams", "RotaryEmbedding"]
