"""Memory layouts as a dimension of every input domain: the views real models pass (see ``domains``).

Every spec accepts non-contiguous tensors, and models rarely pass contiguous ones: q, k and v are
``transpose(1, 2)`` of a [B, T, H, D] projection, slices of one fused qkv projection, k is broadcast
over the heads it serves (multi-query and grouped-query attention), position ids are one row
broadcast over the batch, and a permute leaves a channels-last order. ``layouts(shape)`` draws one
of these for a tensor of that shape (``grader.student.Layout``, delivered by ``Viewed``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from hypothesis import strategies as st

from grader.student import Layout, Viewed

KINDS = ("contiguous", "heads transposed", "last two transposed", "permuted", "fused slice", "strided",
         "broadcast", "all at once")


def _swap(rank: int, first: int, second: int) -> tuple[int, ...]:
    order = list(range(rank))
    order[first], order[second] = order[second], order[first]
    return tuple(order)


@st.composite
def layouts(draw, shape: tuple[int, ...], broadcastable: tuple[int, ...] = (),
            kinds: tuple[str, ...] = KINDS) -> Layout:
    """A layout for a tensor of ``shape``; ``broadcastable``: the axes a caller may share with stride 0
    (their values are then made equal, ``Layout.values``)."""
    rank = len(shape)
    if rank == 0:
        return Layout()
    kind = draw(st.sampled_from(kinds))
    order, window, broadcast = (), None, ()
    if kind in ("heads transposed", "all at once") and rank >= 2:
        order = _swap(rank, max(0, rank - 3), rank - 2)
    if kind == "last two transposed" and rank >= 2:
        order = _swap(rank, rank - 2, rank - 1)
    if kind == "permuted" and rank >= 2:
        order = tuple(draw(st.permutations(range(rank))))
    if kind in ("fused slice", "all at once"):  # one third of a [..., 3n] projection
        size = shape[-1]
        window = (rank - 1, size * draw(st.integers(0, 2)), 1, 3 * size)
    if kind == "strided":  # every other entry along an axis
        axis = draw(st.integers(0, rank - 1))
        start = draw(st.integers(0, 1))
        window = (axis, start, 2, start + 2 * shape[axis])
    if kind in ("broadcast", "all at once") and broadcastable:
        broadcast = (draw(st.sampled_from(broadcastable)) % rank,)
    return Layout(order, window, broadcast)


def laid(tensor: torch.Tensor, layout: Layout) -> tuple[torch.Tensor, Viewed | torch.Tensor]:
    """(the values the student's view holds, what the call sends): ``tensor`` itself when contiguous."""
    if layout == Layout():
        return tensor, tensor
    values = layout.values(tensor)
    return values, Viewed(values, layout)


def describe(layout: Layout) -> str:
    """How a failure message names a layout."""
    parts = []
    if layout.order:
        parts.append(f"a permute {list(layout.order)} of a contiguous tensor")
    if layout.window is not None:
        axis, start, step, stored = layout.window
        parts.append(f"entries {start}, {start + step}, ... of {stored} along axis {axis}")
    if layout.broadcast:
        parts.append(f"broadcast (stride 0) along axis {layout.broadcast[0]}")
    return " and ".join(parts) or "contiguous"


@dataclass(frozen=True)
class LaidCase:
    """A drawn case whose tensors reach the student in drawn layouts (one of them not contiguous)."""

    case: Any
    names: tuple[str, ...]
    layouts: tuple[Layout, ...]

    def describe(self) -> str:
        laid = [f"{name} as {describe(layout)}" for name, layout in zip(self.names, self.layouts) if layout != Layout()]
        return self.case.describe() + "; " + ", ".join(laid)


@st.composite
def laid_cases(draw, cases: st.SearchStrategy, tensors_of: Callable) -> LaidCase:
    """A case of ``cases`` and a layout for each of its tensors, ``tensors_of(case)`` giving
    (name, shape, broadcastable axes) for each; one tensor (drawn) is never contiguous."""
    case = draw(cases)
    tensors = [spec for spec in tensors_of(case) if len(spec[1]) > 0]
    forced = draw(st.integers(0, len(tensors) - 1))
    chosen = tuple(draw(layouts(shape, axes, KINDS[1:] if index == forced else KINDS))
                   for index, (_, shape, axes) in enumerate(tensors))
    return LaidCase(case, tuple(name for name, *_ in tensors), chosen)
