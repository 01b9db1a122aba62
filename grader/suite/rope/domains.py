"""The rope exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.suite.domains import DTYPES, LEADING, MAGNITUDES, SEEDS, bases, seeded, shape_text, sizes
from grader.suite.inputs import generator

MAX_ENTRIES = 1 << 15  # one case: at most 32 Ki numbers (128 KiB of float32) across the sandbox


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
