"""Published model configurations: the typed-in table of ``content/model_configs.toml``.

Each entry is read from one model's ``config.json`` (its Hugging Face repository is ``source``) and says
what it was checked against, or "unchecked". Nothing here is computed; lessons compute from these values
(wavelengths, window coverage, the cost of a long token) and show the source beside them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

import pandas as pd

from poslab.lessons import CONTENT_DIR

UNCHECKED = "unchecked"


@dataclass(frozen=True)
class ModelConfig:
    name: str
    family: str
    source: str  # the Hugging Face repository whose config.json holds these values
    rope_theta: float
    max_position_embeddings: int
    rope_scaling: str  # "none", or the rope_scaling block in words
    sliding_window: int  # 0: no sliding window
    head_dim: int
    num_attention_heads: int
    num_key_value_heads: int  # fewer than the attention heads: grouped-query attention
    trained_context: str  # the length trained at, in words: max_position_embeddings is not it
    num_hidden_layers: int
    notes: str
    checked: str  # what the values were checked against, or UNCHECKED
    attention_chunk_size: int = 0  # 0: no chunked attention

    @property
    def is_checked(self) -> bool:
        return self.checked != UNCHECKED


@dataclass(frozen=True)
class LongRopeFactors:
    """Phi-3.5 mini's rope_scaling: one factor per RoPE pair for short and for long inputs."""

    model: str
    source: str
    head_dim: int
    rope_theta: float
    original_max_position_embeddings: int
    max_position_embeddings: int
    long_factor: tuple[float, ...]
    short_factor: tuple[float, ...]


@dataclass(frozen=True)
class Llama4Temperature:
    """Llama 4's NoPE-layer temperature: q * (1 + attn_scale * ln(1 + floor((p + 1) / floor_scale)))."""

    source: str
    attn_temperature_tuning: int
    floor_scale: int
    attn_scale: float
    checked: str


@cache
def _raw() -> dict:
    return tomllib.loads((CONTENT_DIR / "model_configs.toml").read_text(encoding="utf-8"))


@cache
def model_configs() -> tuple[ModelConfig, ...]:
    return tuple(ModelConfig(**entry) for entry in _raw()["models"])


def model_config(name: str) -> ModelConfig:
    for config in model_configs():
        if config.name == name:
            return config
    raise KeyError(f"no published configuration named {name!r}; known: {', '.join(c.name for c in model_configs())}")


@cache
def longrope_factors() -> LongRopeFactors:
    raw = dict(_raw()["longrope"])
    raw["long_factor"], raw["short_factor"] = tuple(raw["long_factor"]), tuple(raw["short_factor"])
    return LongRopeFactors(**raw)


@cache
def llama4_temperature() -> Llama4Temperature:
    return Llama4Temperature(**_raw()["llama4_temperature"])


def _window(config: ModelConfig) -> str:
    if config.attention_chunk_size:
        return f"chunks of {config.attention_chunk_size:,} (RoPE layers)"
    return f"{config.sliding_window:,}" if config.sliding_window else "none"


def breakable(text: str) -> str:
    """A repository id that a table may wrap after "/" and "-" (zero-width spaces), so it never forces a
    horizontal scroll on a narrow page."""
    return text.replace("/", "/\u200b").replace("-", "-\u200b")


def config_table() -> pd.DataFrame:
    """One row per model: the values, every cell a string ready to show (``max positions`` is the config's
    max_position_embeddings, which is not the trained length: ``trained context`` says what is). ``config_sources`` holds the same rows' sources, notes and checks."""
    return pd.DataFrame(
        [
            {
                "model": config.name,
                "rope_theta": f"{config.rope_theta:,.0f}",
                "max positions": f"{config.max_position_embeddings:,}",
                "trained context": config.trained_context,
                "rope_scaling": config.rope_scaling,
                "window": _window(config),
            }
            for config in model_configs()
        ]
    )


def config_sources() -> pd.DataFrame:
    """One row per model: the repository whose config.json it was typed from, what the values were checked
    against (or "unchecked"), and the notes (class defaults, layer patterns)."""
    return pd.DataFrame(
        [
            {
                "model": config.name,
                "config.json of": breakable(config.source),
                "checked against": config.checked,
                "notes": config.notes or "(none)",
            }
            for config in model_configs()
        ]
    )
