"""Memory layouts as a dimension of every input domain: the views real models pass (see ``domains``).

Every spec accepts non-contiguous tensors, and models rarely pass contiguous ones: q, k and v are
``transpose(1, 2)`` of a [B, T, H, D] projection, slices of one fused qkv projection, k is broadcast
over the heads it serves (multi-query and grouped-query attention), position ids are one row
broadcast over the batch, and a permute leaves a channels-last order. ``layouts(shape)`` draws one
of these for a tensor of that shape (``grader.student.Layout``, delivered by ``Viewed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from hypothesis import assume
from hypothesis import strategies as st

from grader.argument_layout import Layout, Viewed
from grader.sandboxed.tensor_codec import apply_view
from grader.student import NAME_OF_OP, StudentError
from grader.suite.draw import Unjudged, answer, for_each
from grader.suite.expect import Fail, expect, expect_untouched

KINDS = (
    "contiguous",
    "heads transposed",
    "last two transposed",
    "permuted",
    "fused slice",
    "strided",
    "broadcast",
    "all at once",
)


def _swap(rank: int, first: int, second: int) -> tuple[int, ...]:
    order = list(range(rank))
    order[first], order[second] = order[second], order[first]
    return tuple(order)


@st.composite
def layouts(
    draw,
    shape: tuple[int, ...],
    broadcastable: tuple[int, ...] = (),
    kinds: tuple[str, ...] = KINDS,
    features_inside: bool = True,
) -> Layout:
    """A layout for a tensor of ``shape``; ``broadcastable``: the axes a caller may share with stride 0
    (their values are then made equal, ``Layout.values``). ``features_inside``: the last axis stays
    innermost in memory (stride 1), as every projection leaves it: q, k and v come out of a Linear with
    their features last and contiguous, and code that reads feature pairs as complex numbers
    (``view_as_complex``, Meta's LLaMA) relies on it. Otherwise the last two axes may swap too (k stored
    as [..., D, T])."""
    rank = len(shape)
    outer = rank - 1 if features_inside else rank  # the axes a permute or a stride may move
    if rank == 0:
        return Layout()
    kind = draw(st.sampled_from(kinds))
    if outer < 2 and kind in ("heads transposed", "last two transposed", "permuted"):
        kind = "strided" if outer == 1 else "fused slice"  # one axis to move has one order only
    if kind == "last two transposed" and features_inside:
        kind = "heads transposed"
    order, window, broadcast = (), None, ()
    if kind in ("heads transposed", "all at once") and outer >= 2:  # [..., T, H, D] -> [..., H, T, D]
        order = _swap(rank, rank - 3, rank - 2) if rank >= 3 else _swap(rank, 0, 1)
    if kind == "last two transposed":
        order = _swap(rank, rank - 2, rank - 1)
    if kind == "permuted":
        identity = tuple(range(outer))
        moved = draw(st.permutations(identity).filter(lambda drawn: tuple(drawn) != identity))
        order = tuple(moved) + tuple(range(outer, rank))
    if kind in ("fused slice", "all at once"):  # one third of a [..., 3n] projection
        size = shape[-1]
        window = (rank - 1, size * draw(st.integers(0, 2)), 1, 3 * size)
    if kind == "strided" and outer >= 1:  # every other entry along an axis
        axis = draw(st.integers(0, outer - 1))
        start = draw(st.integers(0, 1))
        window = (axis, start, 2, start + 2 * shape[axis])
    # A stride-0 axis has one stored entry: it cannot also be a window of a wider storage.
    free_axes = [axis % rank for axis in broadcastable if window is None or axis % rank != window[0]]
    if kind in ("broadcast", "all at once") and free_axes:
        broadcast = (draw(st.sampled_from(free_axes)),)
    return Layout(order, window, broadcast)


def laid_tensor(tensor: torch.Tensor, layout: Layout) -> tuple[torch.Tensor, Viewed | torch.Tensor]:
    """(the values the student's view holds, what the call sends): ``tensor`` itself when contiguous."""
    if layout == Layout():
        return tensor, tensor
    values = layout.values(tensor)
    return values, Viewed(values, layout)


def describe(layout: Layout, shape: tuple[int, ...]) -> str:
    """How a failure message names a layout of a tensor of ``shape``."""
    parts = []
    if layout.order:
        parts.append(f"a permute {list(layout.order)} of a contiguous tensor")
    if layout.window is not None:
        axis, start, step, stored = layout.window
        last = start + step * (shape[axis] - 1)
        if last == start:
            parts.append(f"entry {start} of {stored} along axis {axis}")
        else:
            parts.append(
                f"entries {start}, {start + step}, ..., {last} of {stored} along axis {axis}"
                if step > 1
                else f"entries {start} to {last} of {stored} along axis {axis}"
            )
    if layout.broadcast:
        parts.append(f"broadcast (stride 0) along axis {layout.broadcast[0]}")
    return " and ".join(parts) or "contiguous"


@dataclass(frozen=True)
class LaidCase:
    """A drawn case whose tensors reach the student in drawn layouts (one of them not contiguous)."""

    case: Any
    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    layouts: tuple[Layout, ...]

    def describe(self) -> str:
        laid = [
            f"{name} as {describe(layout, shape)}"
            for name, shape, layout in zip(self.names, self.shapes, self.layouts)
            if layout != Layout()
        ]
        return self.case.describe() + "; " + ", ".join(laid)


def delivered_contiguous(shape: tuple[int, ...], layout: Layout) -> bool:
    """Whether the tensor a student receives in ``layout`` is contiguous after all: a permute or a stride along
    axes of size 1 leaves it so, and then it tests nothing that a contiguous tensor does not."""
    if layout == Layout():
        return True
    values = layout.values(torch.zeros(shape))
    return apply_view(layout.storage(values), layout.wire(values.shape)).is_contiguous()


def _kinds_for(axes: tuple[int, ...], forced: bool) -> tuple[str, ...]:
    kinds = KINDS[1:] if forced else KINDS
    return kinds if axes else tuple(kind for kind in kinds if kind != "broadcast")  # nothing to broadcast


@st.composite
def laid_cases(draw, cases: st.SearchStrategy, tensors_of: Callable, free_features: tuple[str, ...] = ()) -> LaidCase:
    """A case of ``cases`` and a layout for each of its tensors, ``tensors_of(case)`` giving
    (name, shape, broadcastable axes) for each; one tensor (drawn) reaches the student not contiguous
    (a draw where every layout is undone by axes of size 1 is drawn again). The tensors named in
    ``free_features`` may have their last axis moved in memory too (``layouts``)."""
    case = draw(cases)
    tensors = [spec for spec in tensors_of(case) if len(spec[1]) > 0]
    forced = draw(st.integers(0, len(tensors) - 1))
    chosen = tuple(
        draw(layouts(shape, axes, _kinds_for(axes, index == forced), name not in free_features))
        for index, (name, shape, axes) in enumerate(tensors)
    )
    assume(not all(delivered_contiguous(shape, layout) for (_, shape, _), layout in zip(tensors, chosen)))
    return LaidCase(case, tuple(name for name, *_ in tensors), tuple(shape for _, shape, _ in tensors), chosen)


def for_each_layout(*domains: tuple, count: int = 3) -> Callable:
    """``for_each`` over ``count`` laid cases of the domains (each ``(cases, tensors_of[, free_features])``, as
    ``laid_cases`` takes them), with, in every run, one case of each in every layout at once
    (``every_layout_at_once``)."""
    drawn = [laid_cases(*domain) for domain in domains]
    return for_each(
        drawn[0] if len(drawn) == 1 else st.one_of(*drawn),
        count=count,
        edges=st.tuples(*(every_layout_at_once(*domain) for domain in domains)),
    )


def every_layout_at_once(
    cases: st.SearchStrategy, tensors_of: Callable, free_features: tuple[str, ...] = ()
) -> st.SearchStrategy:
    """An edge of a layout test (``for_each(..., edges=st.tuples(...))``): a case whose first tensor has every
    size >= 2 and comes transposed, as a slice of a fused projection and broadcast where it may be, all at
    once, so that a ``view`` merging any two of its axes fails (drawn layouts on small sizes seldom do)."""
    sized = cases.filter(
        lambda case: (
            _small_and_sized(tensors_of(case)[0][1])
            and sum(math.prod(spec[1]) for spec in tensors_of(case)) <= 4 * AT_ONCE_ENTRIES
        )
    )
    return sized.flatmap(lambda case: _all_at_once(case, tensors_of, free_features))


AT_ONCE_ENTRIES = 1024  # the edge's first tensor at most: every axis of 2 or more is what it is for, not its size


def _small_and_sized(shape: tuple[int, ...]) -> bool:
    return bool(shape) and min(shape) >= 2 and math.prod(shape) <= AT_ONCE_ENTRIES


@st.composite
def _all_at_once(draw, case: Any, tensors_of: Callable, free_features: tuple[str, ...]) -> LaidCase:
    tensors = [spec for spec in tensors_of(case) if len(spec[1]) > 0]
    name, shape, axes = tensors[0]
    first = draw(layouts(shape, axes, ("all at once",), name not in free_features))
    chosen = (first, *(Layout() for _ in tensors[1:]))
    return LaidCase(case, tuple(name for name, *_ in tensors), tuple(spec[1] for spec in tensors), chosen)


_arguments: dict[LaidCase, tuple[tuple, tuple]] = {}  # per process: the same for every submission


def laid_arguments(laid: LaidCase, tensors: Callable[[], Sequence[torch.Tensor]]) -> tuple[tuple, tuple]:
    """(the values the student's views hold, what the call sends) for the case's ``tensors()``, built once."""
    if laid not in _arguments:
        _arguments[laid] = tuple(zip(*(laid_tensor(tensor, layout) for tensor, layout in zip(tensors(), laid.layouts))))
    return _arguments[laid]


def expect_layouts_accepted(
    student,
    laid: LaidCase,
    op: str,
    tensors: Callable[[], Sequence[torch.Tensor]],
    call: Callable[[Sequence], tuple[tuple, dict]],
    judge: Callable[[Any, Sequence], bool],
    same: Callable[[Any, Any, Sequence], bool],
    message: str,
    untouched: bool = True,
) -> None:
    """``op`` called with ``tensors()`` in the case's layouts (``call(tensors)`` gives its arguments, the tensors
    in order) leaves them untouched (if ``untouched``) and answers what the spec asks (``judge(output, values)``,
    against the oracle), or, when not, what it answers for the same values contiguous (``same(output, own,
    values)``): the values are the value tests' business, the layout this test's."""
    values, sent = laid_arguments(laid, tensors)
    args, kwargs = call(sent)

    def contiguous():
        plain_args, plain_kwargs = call(values)
        return answer(student, ("contiguous", laid), op, *plain_args, **plain_kwargs).output

    try:
        result = answer(student, ("laid", laid), op, *args, **kwargs)
    except StudentError as error:
        try:
            contiguous()
        except StudentError:
            raise Unjudged(error) from None  # it raises for these values in any layout: the value tests' business
        raise Fail(f"{message} Yours raised {error.kind}: {' '.join(error.message.split())[:200]}") from None
    if untouched:  # (learned's own test of that is apart)
        expect_untouched(result.inputs_after, values, NAME_OF_OP[op], laid.names)
    if not judge(result.output, values):
        expect(same(result.output, contiguous(), values), message)
