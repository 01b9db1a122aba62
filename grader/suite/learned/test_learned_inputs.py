"""The learned exercise's hidden tests of its input: x left untouched, and accepted in any layout."""

from __future__ import annotations

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import expect_inputs_left
from grader.suite.expect import as_tensor, expect_untouched, within
from grader.suite.inputs import randn
from grader.suite.layouts import expect_layouts_accepted, for_each_layout
from grader.suite.learned.domains import EmbeddingCase, embedding_cases
from grader.suite.learned.test_learned import _adds, test_forward_full_length_and_single_position
from grader.suite.learned.tolerances import sum_tolerance


@graded(points=2, family="inputs", visibility=VISIBLE)
def test_input_untouched(student):
    """forward leaves x unchanged (no in-place addition), for a float32 module and one moved to float64."""
    for dtype in (torch.float32, torch.float64):
        x, table = randn(2, 4, 3, seed=351, dtype=dtype), randn(6, 3, seed=352)
        result = student.call(
            "learned.forward",
            max_len=6,
            d_model=3,
            x=x,
            table=table,
            **({} if dtype == torch.float32 else {"dtype": "float64"}),
        )
        expect_untouched(result.inputs_after[:1], (x,), "forward", ("x",))
    for case in test_forward_full_length_and_single_position.prepare():  # the drawn value test's calls, shared
        x, table = case.x(), case.table()
        expect_inputs_left(
            student,
            ("forward", case),
            "learned.forward",
            (),
            dict(max_len=table.shape[0], d_model=x.shape[2], x=x, table=table),
            {"x": x},
        )


VIEWS = (
    "forward must accept x in every layout models pass it in (a transpose of a sequence-first [T, B, D] "
    "tensor, every other token, a slice of a wider tensor, one sequence broadcast over the batch) and give the "
    "same result as for a contiguous x: use reshape, not view, and index rather than assume a layout."
)


@graded(points=1, family="inputs", visibility=HIDDEN)
@for_each_layout((embedding_cases(), EmbeddingCase.tensor_specs))
def test_non_contiguous_input(student, laid):
    """forward accepts x in any layout (transposed from sequence first, strided, sliced, broadcast over the batch)."""
    case = laid.case
    table = case.table()

    def call(sent):
        return (), {"max_len": case.max_len, "d_model": case.d_model, "x": sent[0], "table": table}

    def judge(output, values):
        return _adds(as_tensor(output, "LearnedPositionalEmbedding.forward"), values[0], table[: case.seq_len])

    def same(output, own, values):
        return within(
            as_tensor(output, "forward(x)"),
            as_tensor(own, "forward(x)"),
            2 * sum_tolerance(values[0], table[: case.seq_len], values[0].dtype),
        )

    expect_layouts_accepted(
        student, laid, "learned.forward", lambda: [case.x()], call, judge, same, VIEWS, untouched=False
    )
