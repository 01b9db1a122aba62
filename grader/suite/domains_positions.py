"""The input domains of the absolute encodings and RoPE: sinusoidal, learned, rope (see ``domains``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.suite.domains import DTYPES, LEADING, MAGNITUDES, SEEDS, bases, seeded, shape_text, sizes
from grader.suite.inputs import generator

MAX_ENTRIES = 1 << 15  # one case: at most 32 Ki numbers (128 KiB of float32) across the sandbox


# ---- sinusoidal


@dataclass(frozen=True)
class TableCase:
    seq_len: int
    d_model: int
    base: float | None  # None: the default, not passed

    @property
    def used_base(self) -> float:
        return 10000.0 if self.base is None else self.base

    def kwargs(self) -> dict:
        return {} if self.base is None else {"base": self.base}

    def describe(self) -> str:
        base = "" if self.base is None else f", base={self.base:g}"
        return f"seq_len={self.seq_len}, d_model={self.d_model}{base}"


@st.composite
def table_cases(draw, base: str = "default", longest: int = 4096) -> TableCase:
    """``base``: "default" (not passed) or "explicit" (any base > 1, 10000.0 included)."""
    d_model = 2 * draw(sizes(1, 256, 3, 32))
    seq_len = draw(sizes(1, max(1, min(longest, MAX_ENTRIES // d_model))))
    return TableCase(seq_len, d_model, None if base == "default" else draw(bases(default_too=False)))


# ---- learned


@dataclass(frozen=True)
class EmbeddingCase:
    batch: int
    seq_len: int
    max_len: int
    d_model: int
    scale: float  # of x
    table_scale: float
    seed: int

    def x(self) -> torch.Tensor:
        return seeded((self.batch, self.seq_len, self.d_model), self.seed, scale=self.scale)

    def table(self) -> torch.Tensor:
        return seeded((self.max_len, self.d_model), self.seed + 1, scale=self.table_scale)

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of x (``layouts.laid_cases``). None is broadcast: an
        addition in place (a mistake the visible test "input untouched" is about) cannot write to a broadcast x."""
        return [("x", (self.batch, self.seq_len, self.d_model), ())]

    def describe(self) -> str:
        x = shape_text([self.batch, self.seq_len, self.d_model])
        return f"max_len={self.max_len}, d_model={self.d_model}, x {x} with entries about {self.scale:g}"


@st.composite
def embedding_cases(draw, too_long: bool = False) -> EmbeddingCase:
    """T <= max_len (T = max_len and T = 1 as often as any other), or, ``too_long``, T > max_len."""
    max_len, d_model = draw(sizes(1, 64)), draw(sizes(1, 32))
    length = draw(st.sampled_from(["any", "full", "one"]))
    seq_len = {"full": max_len, "one": 1}.get(length) or draw(st.integers(1, max_len))
    if too_long:
        seq_len = max_len + draw(st.integers(1, 40))
    return EmbeddingCase(
        draw(st.integers(1, 4)), seq_len, max_len, d_model, draw(MAGNITUDES), draw(MAGNITUDES), draw(SEEDS)
    )


# ---- rope


@dataclass(frozen=True)
class RotaryCase:
    lead: tuple[int, ...]
    tokens: int
    head_dim: int
    dtype: str
    scale: float
    positions: str  # "default" (not passed), "arange", "spread" (any order, repeats) or "far"
    positions_dtype: str
    largest: int  # positions drawn from 0 .. largest
    base: float | None
    seed: int

    def x(self) -> torch.Tensor:
        return seeded((*self.lead, self.tokens, self.head_dim), self.seed, DTYPES[self.dtype], self.scale)

    def position_tensor(self) -> torch.Tensor | None:
        dtype = getattr(torch, self.positions_dtype)
        if self.positions == "default":
            return None
        if self.positions == "arange":
            return torch.arange(self.tokens, dtype=dtype)
        low = 0 if self.positions == "spread" else self.largest // 2
        drawn = torch.randint(low, self.largest + 1, (self.tokens,), generator=generator(self.seed + 1))
        return drawn.to(dtype)

    def used_positions(self) -> torch.Tensor:
        positions = self.position_tensor()
        return torch.arange(self.tokens) if positions is None else positions.long()

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of each tensor argument (``layouts.laid_cases``)."""
        specs = [("x", (*self.lead, self.tokens, self.head_dim), tuple(range(len(self.lead))))]
        return specs + ([] if self.positions == "default" else [("positions", (self.tokens,), ())])

    def kwargs(self) -> dict:
        kwargs = {} if self.positions == "default" else {"positions": self.position_tensor()}
        return kwargs if self.base is None else kwargs | {"base": self.base}

    @property
    def used_base(self) -> float:
        return 10000.0 if self.base is None else self.base

    def describe(self) -> str:
        text = f"x {shape_text([*self.lead, self.tokens, self.head_dim])}, {self.dtype}, entries about {self.scale:g}"
        if self.positions != "default":
            text += f", {self.positions_dtype} positions up to {int(self.used_positions().max())}"
        return text + ("" if self.base is None else f", base={self.base:g}")


@st.composite
def rotary_cases(draw, dtypes: tuple[str, ...] = ("float32", "float64", "float16")) -> RotaryCase:
    lead = draw(LEADING)
    head_dim = 2 * draw(sizes(1, 64, 3, 32))
    rows = torch.Size(lead).numel() * head_dim
    tokens = draw(sizes(1, max(1, min(48, (MAX_ENTRIES // 4) // rows))))  # float64 x: a quarter of the numbers
    positions = draw(st.sampled_from(["default", "arange", "spread", "far"]))
    largest = draw(st.sampled_from([10, 2048, 32768])) if positions in ("spread", "far") else tokens - 1
    return RotaryCase(
        lead,
        tokens,
        head_dim,
        draw(st.sampled_from(dtypes)),
        draw(MAGNITUDES),
        positions,
        draw(st.sampled_from(["int64", "int32"])),
        largest,
        draw(bases()),
        draw(SEEDS),
    )
