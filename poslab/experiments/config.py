"""The extrapolation experiment's settings: one frozen dataclass, and its full and quick modes.

The app's live quick run (``LiveQuickRun.from_env``) is the quick mode unless the environment says:
``POSLAB_LAB_QUICK_STEPS`` its training steps (a whole number, default ``QUICK.steps``) and
``POSLAB_LAB_QUICK_ENCODINGS`` the encodings it trains (names, comma- or space-separated; default all
five). A server short of CPU may shorten the run; the browser tests train two models a few steps.
The command line's ``--quick`` is not affected.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from poslab.experiments.rope_arms import SCALINGS
from poslab.experiments.tiny_transformer import ENCODINGS, ModelConfig


@dataclass(frozen=True)
class ExperimentConfig:
    encodings: tuple[str, ...] = ENCODINGS
    seeds: tuple[int, ...] = (0, 1, 2)
    train_len: int = 64
    eval_multiples: tuple[int, ...] = (1, 2, 4, 8)
    vocab_size: int = 16
    steps: int = 800
    batch_size: int = 16
    learning_rate: float = 3e-3
    warmup_steps: int = 50
    weight_decay: float = 0.01
    eval_tokens: int = 16_384  # test tokens per evaluation length (fewer, longer sequences as it grows)
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    threads: int = 1  # recorded: the command line and its pool run one intra-op thread a process (poslab.threads)
    # The passkey probe (``passkey``): where the needle sits, as a share of the sequence (0 = the
    # start, 1 = just before the query), and how many needles per (length, depth) and seed.
    probe_depths: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    probe_trials: int = 48
    # RoPE's context-extension schedules tested on the trained RoPE model (``rope_arms``); the
    # passkey and two-hop probes (``two_hop``) use the depths and trials above.
    rope_scalings: tuple[str, ...] = SCALINGS

    @property
    def eval_lens(self) -> tuple[int, ...]:
        return tuple(self.train_len * multiple for multiple in self.eval_multiples)

    @property
    def chance_accuracy(self) -> float:
        return 1.0 / self.vocab_size

    @property
    def probe_chance(self) -> float:
        """A guess among the V - 1 tokens that can be a needle's value (any token but its key)."""
        return 1.0 / (self.vocab_size - 1)

    @property
    def two_hop_chance(self) -> float:
        """A blind guess at both answers of a chain: one of V - 1 tokens, then one of V - 2."""
        return 1.0 / ((self.vocab_size - 1) * (self.vocab_size - 2))

    def arms_of(self, encoding: str) -> tuple[str, ...]:
        """What one trained model is tested as: itself, and for RoPE each scaling too."""
        return (encoding, *(f"rope+{name}" for name in self.rope_scalings)) if encoding == "rope" else (encoding,)

    def model_config(self, encoding: str) -> ModelConfig:
        return ModelConfig(encoding, self.vocab_size, self.train_len, self.n_layers, self.n_heads, self.d_model)


# Step counts from measured learning curves (batch 16, lr 3e-3, accuracy at 64 tokens): RoPE jumps
# from ~20% to ~92% between steps 100 and 150 (the induction head forming); ALiBi reaches ~80% by 200
# and ~92% by 600; sinusoidal ~80% by 200 and ~98% by 600; learned and NoPE are slower. One step
# costs ~45 ms of CPU on the course machine, so the full run is ~12,000 steps, ~10 min on one core.
FULL = ExperimentConfig()
# Quick mode: the same model in 150 steps. Measured at 64 tokens over seeds 0-2: with the full run's
# lr and warmup RoPE reached 48-73% and ALiBi 60-65%; a higher lr and shorter warmup, at the same
# cost, gave RoPE 72-91%, ALiBi 67-71%, sinusoidal 39-48%. The probe's needles cost a forward pass
# of a whole sequence each, so quick mode tests fewer of them: 16 per cell, at three depths (the
# start, the middle, just before the query), for eight arms and two probes.
QUICK = replace(
    FULL,
    seeds=(0,),
    steps=150,
    learning_rate=4e-3,
    warmup_steps=20,
    eval_tokens=4_096,
    probe_trials=16,
    probe_depths=(0.0, 0.5, 1.0),
)

LIVE_STEPS_ENV = "POSLAB_LAB_QUICK_STEPS"
LIVE_ENCODINGS_ENV = "POSLAB_LAB_QUICK_ENCODINGS"


@dataclass(frozen=True)
class LiveQuickRun:
    """What the app's live quick run trains: None and () are the quick mode's own steps and encodings."""

    steps: int | None = None
    encodings: tuple[str, ...] = ()

    @property
    def models(self) -> int:
        return len(self.encodings or QUICK.encodings)

    def shortened(self) -> str:
        """What this server changed of the quick mode, in words ("" when nothing)."""
        changes = [f"{self.steps} training steps"] * bool(self.steps)
        changes += [f"only {', '.join(self.encodings)}"] * bool(self.encodings)
        if not changes:
            return ""
        settings = f"{LIVE_STEPS_ENV}, {LIVE_ENCODINGS_ENV}"
        return f"On this server the quick run is shortened: {' and '.join(changes)} ({settings})."

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> LiveQuickRun:
        """``POSLAB_LAB_QUICK_STEPS`` and ``POSLAB_LAB_QUICK_ENCODINGS``; a bad value is a ``ValueError``."""
        steps = environ.get(LIVE_STEPS_ENV, "").strip()
        if steps and (not steps.isdigit() or int(steps) < 1):
            raise ValueError(f"{LIVE_STEPS_ENV} must be a whole number of at least 1, got {steps!r}")
        encodings = tuple(environ.get(LIVE_ENCODINGS_ENV, "").replace(",", " ").split())
        if unknown := [name for name in encodings if name not in ENCODINGS]:
            raise ValueError(
                f"{LIVE_ENCODINGS_ENV} names unknown encodings {', '.join(unknown)}; known: {', '.join(ENCODINGS)}"
            )
        return cls(int(steps) if steps else None, encodings)
