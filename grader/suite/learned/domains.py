"""The learned exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.suite.domains import MAGNITUDES, SEEDS, seeded, shape_text, sizes


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
