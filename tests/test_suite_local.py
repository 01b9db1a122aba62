"""LocalStudent keeps the Student contract of grader/student.py (for trusted code)."""

from __future__ import annotations

import pytest
import torch

from grader.argument_layout import transposed
from grader.mutants import reference_source
from grader.student import (
    TABLE_IN_BUFFER,
    CannotCheck,
    NotATensor,
    NotImplementedBySubmission,
    StudentError,
    TensorInfo,
)
from grader.suite.local import LocalStudent

SUBMISSION = """
import torch
from torch import nn


def apply_rope(x, positions=None, base=10000.0):
    x.mul_(2)  # mutates its input, on purpose
    return x


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return [[0.0] * d_model] * seq_len  # not a tensor


def alibi_slopes(n_heads):
    raise NotImplementedError("alibi_slopes is not implemented yet")


def alibi_bias(n_heads, seq_len):
    raise ValueError(f"no bias for {n_heads} heads")


def attention(q, k, v, bias=None):
    return q.is_contiguous(), k.is_contiguous()  # reports what it received


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.table = nn.Parameter(torch.zeros(max_len, d_model))
        self.register_buffer("unused", torch.zeros(1))

    def forward(self, x):
        return x + self.table[: x.shape[1]]
"""


@pytest.fixture
def student():
    return LocalStudent.from_source(SUBMISSION)


def test_the_callers_tensors_are_never_touched(student):
    x = torch.ones(2, 3)
    result = student.call("apply_rope", x)
    assert torch.equal(x, torch.ones(2, 3))
    assert torch.equal(result.output, torch.full((2, 3), 2.0))
    assert torch.equal(result.inputs_after[0], torch.full((2, 3), 2.0))  # what the submission did to its copy


def test_transposed_arguments_arrive_as_non_contiguous_views_with_the_same_values():
    student = LocalStudent({"attention": lambda q, k, v, bias=None: (q.is_contiguous() * torch.ones(1), k.clone())})
    k = torch.arange(6.0).view(2, 3)
    contiguous, seen = student.attention(torch.zeros(2, 2), transposed(k, 0, 1), torch.zeros(2, 2))
    assert contiguous.item() == 1.0 and torch.equal(seen, k)
    flags = LocalStudent({"attention": lambda q, k, v, bias=None: torch.tensor([float(k.is_contiguous())])})
    assert flags.attention(torch.zeros(2, 2), transposed(k, 0, 1), torch.zeros(2, 2)).item() == 0.0


def test_non_tensor_results_come_back_as_not_a_tensor_with_their_values(student):
    result = student.call("sinusoidal_encoding", 2, 4)  # a list of lists of floats
    assert isinstance(result.output, NotATensor) and result.output.returned == "list"
    assert torch.equal(result.output.values, torch.zeros(2, 4))
    assert result.notes == (
        "sinusoidal_encoding returned a list, not a torch.Tensor; this test converted it to "
        "a tensor to judge its values",
    )
    pair = student.attention(torch.zeros(2, 2), torch.zeros(2, 2), torch.zeros(2, 2))  # a pair of bools
    assert isinstance(pair, NotATensor) and pair.returned == "tuple"
    nothing = LocalStudent({"alibi_slopes": lambda n_heads: None}).alibi_slopes(4)
    assert nothing == NotATensor("None", None)


def test_errors_and_missing_names(student):
    with pytest.raises(NotImplementedBySubmission) as raised:
        student.alibi_slopes(8)
    assert raised.value.name == "alibi_slopes"
    with pytest.raises(StudentError) as error:
        student.alibi_bias(3, 4)
    assert (error.value.kind, error.value.message) == ("ValueError", "no bias for 3 heads")
    with pytest.raises(NotImplementedBySubmission):
        LocalStudent({}).apply_rope(torch.zeros(1, 2))
    with pytest.raises(ValueError, match="unknown op"):
        student.call("rm -rf")


def test_learned_operations(student):
    parameters = student.learned_parameters(5, 3)
    assert parameters == (TensorInfo((5, 3), "float32", "cpu", True),)
    table = torch.arange(15.0).view(5, 3)
    x = torch.ones(2, 4, 3)
    assert torch.equal(student.learned_forward(5, 3, x, table=table), x + table[:4])
    out = student.learned_forward(5, 3, x.double(), table=table, dtype="float64")
    assert out.dtype == torch.float64 and not out.requires_grad
    info = student.learned_forward(5, 3, torch.empty(2, 4, 3, device="meta"), device="meta")
    assert info == TensorInfo((2, 4, 3), "float32", "meta", True)


def test_learned_forward_needs_one_table_and_finds_it_among_buffers_too():
    two = LocalStudent({"LearnedPositionalEmbedding": lambda max_len, d_model: torch.nn.Bilinear(1, 1, 1)})
    with pytest.raises(CannotCheck, match="no parameter"):
        two.learned_forward(5, 3, torch.ones(1, 2, 3), table=torch.zeros(5, 3))
    buffered = LocalStudent.from_source(
        reference_source().replace(
            "self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)",
            'self.register_buffer("table", torch.randn(max_len, d_model))',
        )
    )
    result = buffered.call("learned.forward", max_len=5, d_model=3, x=torch.ones(1, 2, 3), table=torch.ones(5, 3))
    assert torch.equal(result.output, torch.full((1, 2, 3), 2.0))
    assert result.notes == (TABLE_IN_BUFFER,)
    assert buffered.learned_parameters(5, 3) == ()
    assert buffered.learned_buffers(5, 3) == (TensorInfo((5, 3), "float32", "cpu", False),)


def test_meta_calls_report_tensor_info():
    student = LocalStudent.from_source(reference_source())
    result = student.call("apply_rope", torch.empty(2, 5, 8, device="meta", dtype=torch.float16))
    assert result.output == TensorInfo((2, 5, 8), "float16", "meta", False)
    assert result.inputs_after == (None,)
    out, weights = student.attention(*(torch.empty(3, 4, device="meta") for _ in range(3)))
    assert out.device == weights.device == "meta"


def test_wall_time_is_measured_and_overhead_is_zero():
    student = LocalStudent.from_source(reference_source())
    assert student.call("alibi_bias", 4, 8).wall_seconds > 0
    assert student.call_overhead_seconds() == 0.0
