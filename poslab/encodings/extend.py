"""Context extension in Hugging Face's terms: a ``rope_scaling`` dict onto the schedules' registry.

``scaled_inv_freq(head_dim, base, scaling, seq_len)`` reads a config's ``rope_type`` (``default``,
``linear``, ``dynamic``, ``yarn``, ``llama3``), its ``factor`` s and its trained length
``original_max_position_embeddings`` L, and computes the frequencies with ``rope_schedule``
(``rope_scaling.py``, where the formulas and their sources are): this module only maps names.
"""

from __future__ import annotations

import torch

from poslab.encodings._checks import require
from poslab.encodings.rope_scaling import rope_schedule

ROPE_TYPES = {"default": "none", "linear": "linear", "dynamic": "dynamic", "yarn": "yarn", "llama3": "llama3"}
# Each type's own keys in Hugging Face's config, as the registry names its parameters.
TYPE_KEYS = {"yarn": ("beta_fast", "beta_slow"), "llama3": ("low_freq_factor", "high_freq_factor")}


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [D/2], attention_factor) of RoPE under ``scaling`` (None: the default)."""
    scaling = scaling or {"rope_type": "default"}
    rope_type = scaling.get("rope_type")
    require(rope_type in ROPE_TYPES, f"unknown rope_type {rope_type!r}; known: {', '.join(ROPE_TYPES)}")
    require(head_dim >= 4, f"head_dim must be an even int >= 4, got {head_dim!r}")
    factor = float(scaling.get("factor", 1.0))
    original_len = scaling.get("original_max_position_embeddings", 4096)
    params = {key: float(scaling[key]) for key in TYPE_KEYS.get(rope_type, ()) if key in scaling}
    schedule = rope_schedule(ROPE_TYPES[rope_type], head_dim, base, factor, original_len, seq_len, **params)
    attention_factor = scaling.get("attention_factor") if rope_type == "yarn" else None
    return schedule.inv_freq, float(schedule.attention_scale if attention_factor is None else attention_factor)
