"""The rope exercise's hidden tests of inputs left untouched and views accepted, and of speed."""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import VISIBLE, graded
from grader.suite.draw import answer, expect_inputs_left
from grader.suite.expect import (
    as_tensor,
    expect_untouched,
    within,
)
from grader.suite.inputs import randn
from grader.suite.layouts import expect_layouts_accepted, for_each_layout, laid_arguments
from grader.suite.rope.domains import RotaryCase, rotary_cases
from grader.suite.rope.test_rope import (
    _expectations,
    _loosest,
    _matching_pairing,
    _rope_kwargs,
    test_values_explicit_positions_and_base,
)
from grader.suite.timing import expect_fast
from poslab.encodings import apply_rope as reference_apply_rope

VIEWS = (
    "apply_rope must accept x and positions in every layout models pass them in (q.transpose(1, 2) of a "
    "[B, T, H, D] projection, a slice of a fused qkv projection, every other token, a permuted tensor) and give "
    "the same result: use reshape, not view, and index rather than assume a layout."
)


@graded(points=2, family="inputs", visibility=VISIBLE)
@for_each_layout((rotary_cases(), RotaryCase.tensor_specs))
def test_inputs_untouched_and_views_accepted(student, laid):
    """apply_rope leaves x and positions unchanged and accepts them in any layout: transposed, sliced, broadcast.

    Unchanged in every dtype the spec names (a write into what ``.to(dtype)`` returned reaches a caller's tensor
    of that dtype only)."""
    for dtype, ids in ((torch.float32, torch.int64), (torch.float64, torch.int32), (torch.float16, torch.int64)):
        x, positions = randn(1, 2, 5, 8, seed=471, dtype=dtype), torch.tensor([3, 1, 4, 1, 5], dtype=ids)
        result = answer(student, ("untouched", dtype), "apply_rope", x, positions=positions)
        expect_untouched(result.inputs_after, (x, positions), "apply_rope", ("x", "positions"))
    for case in test_values_explicit_positions_and_base.prepare():  # the drawn value test's calls, shared
        x, kwargs = case.x(), _rope_kwargs(case.position_tensor(), case.base)
        expect_inputs_left(
            student,
            ("values", case),
            "apply_rope",
            (x,),
            kwargs,
            {"x": x} | ({"positions": kwargs["positions"]} if "positions" in kwargs else {}),
        )
    case = laid.case

    def call(sent):
        return (sent[0],), case.kwargs() | ({"positions": sent[1]} if len(sent) > 1 else {})

    def judge(output, values):
        out = as_tensor(output, "apply_rope")
        return (
            out.shape == values[0].shape
            and _matching_pairing(out, values[0], case.used_positions(), case.used_base, _laid_expectations(laid))
            is not None
        )

    def same(output, own, values):
        loosest = _loosest(values[0], case.used_positions(), case.used_base)
        return within(as_tensor(output, "apply_rope"), as_tensor(own, "apply_rope"), 2 * loosest)

    expect_layouts_accepted(student, laid, "apply_rope", lambda: _laid_tensors(laid), call, judge, same, VIEWS)


def _laid_tensors(laid) -> list[torch.Tensor]:
    given = laid.case.position_tensor()
    return [laid.case.x()] + ([] if given is None else [given])


@lru_cache(maxsize=8)
def _laid_expectations(laid) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """The oracle and tolerance per pairing for a laid case's values, once per process."""
    x = laid_arguments(laid, lambda: _laid_tensors(laid))[0][0]
    return _expectations(x, laid.case.used_positions(), laid.case.used_base)


@graded(points=1, family="speed", visibility=VISIBLE)
def test_speed(student):
    """apply_rope is vectorised over positions: not far slower than the reference."""
    x = randn(1, 1, 30_000, 2, seed=481)
    expect_fast(student, "apply_rope", lambda: reference_apply_rope(x), x)
