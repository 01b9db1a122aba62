"""The sinusoidal exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.suite.domains import bases, sizes

MAX_ENTRIES = 1 << 15  # one case: at most 32 Ki numbers (128 KiB of float32) across the sandbox


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
