"""RoPE arms: the trained RoPE model tested with a context-extension schedule, no new training.

An arm is what the lab tests: one of the trained encodings (``ENCODINGS``), or the RoPE model with
position interpolation (``linear``), NTK-aware scaling (``ntk``) or YaRN (``yarn``) from the course's
registry (``poslab.encodings.rope_scaling``), applied at test time with the factor
``s = test length / training length``: the factor a model is given for the length it will read.
At the training length s = 1 and every schedule is plain RoPE, so there the arm runs the
model unchanged (its numbers equal RoPE's exactly).
"""

from __future__ import annotations

import torch

from poslab.encodings import rope_schedule
from poslab.experiments.tiny_transformer import ENCODINGS, TinyDecoder

SCALINGS = ("linear", "ntk", "yarn")  # names in poslab.encodings.rope_scaling.ROPE_SCHEDULES
SCALED_ARMS = tuple(f"rope+{name}" for name in SCALINGS)
ARMS = ENCODINGS + SCALED_ARMS
ROPE_BASE = 10000.0  # the base the lab's RoPE trains with (poslab.encodings.apply_rope's default)


def scaling_of(arm: str) -> str | None:
    """The schedule's name in the registry, or None for an arm that is a trained encoding."""
    return arm.split("+", 1)[1] if arm in SCALED_ARMS else None


def encoding_of(arm: str) -> str:
    """The trained model an arm runs: the arm itself, or ``rope`` for a scaled arm."""
    return "rope" if arm in SCALED_ARMS else arm


class ScaledRope:
    """A trained RoPE model read with a schedule's frequencies and attention scale, for one test length."""

    def __init__(self, model: TinyDecoder, scaling: str, factor: float, train_len: int) -> None:
        head_dim = model.config.d_model // model.config.n_heads
        self.model, self.factor = model, factor
        self.schedule = rope_schedule(scaling, head_dim, ROPE_BASE, factor, train_len)

    def check_length(self, seq_len: int) -> None:
        self.model.check_length(seq_len)

    def __call__(self, tokens: torch.Tensor, last: int | None = None) -> torch.Tensor:
        return self.model(tokens, rope=self.schedule, last=last)


def arm_model(model: TinyDecoder, arm: str, eval_len: int, train_len: int) -> TinyDecoder | ScaledRope:
    """What to test at ``eval_len``: the model itself, or RoPE with the arm's schedule at factor
    ``eval_len / train_len`` (the model itself at the training length or shorter, where s = 1)."""
    scaling = scaling_of(arm)
    if scaling is None or eval_len <= train_len:
        return model
    return ScaledRope(model, scaling, eval_len / train_len, train_len)
