"""The sandboxed Student: the contract of grader/student.py, kept across the process boundary,
and what the child can and cannot see. Expected values are computed here, in the judging process.

These tests need bubblewrap (skip with the reason locally, fail under CI=true); the fallback,
which needs nothing, is test_grader_fallback.py's. Whole submissions through a Grader are
test_sandbox_grading.py's; a child's life (forked ahead, what it inherits) test_sandbox_children.py's.
"""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch

import poslab.encodings as reference
from grader.api import Grader, load_submission
from grader.argument_layout import transposed
from grader.faults import GraderFault
from grader.mutants import reference_source
from grader.sandbox import SubmissionSandbox, WorkerProcess
from grader.settings import GraderSettings
from grader.student import (
    NotATensor,
    NotImplementedBySubmission,
    StudentError,
    SubmissionCrashed,
    TensorInfo,
    Unsendable,
)
from grader.suite.local import LocalStudent
from poslab.exercises import EXERCISES, get_exercise
from tests.hostile._support import PROBE_MAX, SANDBOX_SETTINGS, ProbeSuite, reference_submission, require_bwrap

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = SANDBOX_SETTINGS

TOY = textwrap.dedent("""
    import os, socket, torch

    def attention(q, k, v, bias=None):
        return (q + 1, torch.ones(q.shape[:-1] + k.shape[-2:-1], dtype=q.dtype, device=q.device))

    def apply_rope(x, positions=None, base=10000.0):
        # its input's values, then 1.0 where x was contiguous, 0.0 where it was not
        return torch.stack([x.reshape(-1), torch.full((x.numel(),), float(x.is_contiguous()))])

    def sinusoidal_encoding(seq_len, d_model, base=10000.0):
        if seq_len == 13:
            while True:
                pass
        if seq_len < 0:
            raise ValueError(f"seq_len must be >= 0, got {seq_len}")
        if seq_len == 0:
            raise NotImplementedError
        if seq_len == 1:
            return 42
        return torch.zeros(seq_len, d_model)

    def alibi_slopes(n_heads):
        x = n_heads
        x.mul_(2)  # changes its input in place: inputs_after must show it
        return x

    def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
        scaling.pop("factor")  # changes its dict in place: dicts_after must show it
        scaling["beta_fast"] = float("inf")
        scaling["table"] = torch.ones(1)
        return torch.ones(head_dim // 2), 1.0

    class LearnedPositionalEmbedding(torch.nn.Module):
        def __init__(self, max_len, d_model):
            super().__init__()
            self.table = torch.nn.Parameter(torch.zeros(max_len, d_model))
            self.scale = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x + self.table[: x.shape[1]]
""")


@pytest.fixture
def toy(worker):
    sandbox = SubmissionSandbox(worker, {"toy.py": TOY}, SETTINGS.timeout)
    names = [
        "attention",
        "apply_rope",
        "sinusoidal_encoding",
        "alibi_slopes",
        "LearnedPositionalEmbedding",
        "scaled_inv_freq",
    ]
    yield sandbox.for_exercise(["toy.py"], names)
    sandbox.close()


def test_values_come_back_as_tensors_and_the_callers_inputs_are_untouched(toy):
    q = torch.randn(2, 3, 4, dtype=torch.float64)
    before = q.clone()
    out, weights = toy.attention(q, q, q)
    assert out.dtype == torch.float64 and torch.equal(out, before + 1)
    assert weights.shape == (2, 3, 3)
    assert torch.equal(q, before)


def test_transposed_arguments_arrive_as_non_contiguous_views_with_the_same_values(toy):
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    seen, contiguous = toy.apply_rope(transposed(t, 0, 1))
    assert torch.equal(seen, t.reshape(-1))
    assert torch.all(contiguous == 0)
    seen, contiguous = toy.apply_rope(t)
    assert torch.all(contiguous == 1)


def test_meta_inputs_come_back_as_tensor_info(toy):
    q = torch.empty(2, 5, 8, device="meta")
    out, weights = toy.attention(q, q, q)
    assert out == TensorInfo((2, 5, 8), "float32", "meta", False)
    assert weights == TensorInfo((2, 5, 5), "float32", "meta", False)


def test_a_timed_call_brings_back_the_outputs_shape_and_dtype_and_its_time_not_its_values(toy):
    q = torch.randn(2, 3, 4, dtype=torch.float64)
    result = toy.call_timed("attention", q, q, q)
    assert result.output == (
        TensorInfo((2, 3, 4), "float64", "cpu", False),
        TensorInfo((2, 3, 3), "float64", "cpu", False),
    )
    assert result.wall_seconds > 0
    assert torch.equal(toy.call("attention", q, q, q).output[0], q + 1)  # the next call has its values again


def test_inputs_after_show_in_place_changes_made_by_the_submission(toy):
    x = torch.tensor([1.0, 2.0])
    result = toy.call("alibi_slopes", x)
    assert torch.equal(result.inputs_after[0], torch.tensor([2.0, 4.0]))
    assert torch.equal(x, torch.tensor([1.0, 2.0]))
    assert result.wall_seconds > 0


def test_an_input_changed_behind_torchs_back_is_reported_and_an_untouched_one_is_sent_back_equal(worker):
    """Unchanged inputs are not sent back (``protocol.UNCHANGED_INPUT``): the child compares bytes, so a
    write through a numpy view, which torch's version counter never sees, still shows."""
    source = textwrap.dedent("""
        import torch

        def alibi_slopes(n_heads):
            n_heads.numpy()[0] = -7.0
            return torch.ones(1)

        def alibi_bias(n_heads, seq_len):
            return seq_len * 2
    """)
    sandbox = SubmissionSandbox(worker, {"probe.py": source}, SETTINGS.timeout)
    try:
        student = sandbox.for_exercise(["probe.py"], ["alibi_slopes", "alibi_bias"])
        written = student.call("alibi_slopes", torch.tensor([1.0, 2.0])).inputs_after[0]
        kept = torch.tensor([[3, 4]]).t()
        untouched = student.call("alibi_bias", torch.ones(1), kept).inputs_after
    finally:
        sandbox.close()
    assert torch.equal(written, torch.tensor([-7.0, 2.0]))
    assert all(torch.equal(after, sent) for after, sent in zip(untouched, (torch.ones(1), kept)))
    assert untouched[1].shape == (2, 1) and untouched[1] is not kept


def test_dicts_after_show_what_the_submission_did_to_its_dict_as_a_local_call_does(toy):
    config = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    result = toy.call("scaled_inv_freq", 8, scaling=config)
    left = {
        "rope_type": "yarn",
        "original_max_position_embeddings": 64,
        "beta_fast": float("inf"),
        "table": Unsendable("torch.Tensor"),
    }
    assert result.dicts_after == (left,)
    assert config == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    assert LocalStudent.from_source(TOY).call("scaled_inv_freq", 8, scaling=dict(config)).dicts_after == (left,)


def test_learned_parameters_and_forward_with_a_table_dtype_and_meta(toy):
    infos = toy.learned_parameters(4, 6)
    assert infos == (TensorInfo((4, 6), "float32", "cpu", True), TensorInfo((1,), "float32", "cpu", True))
    table = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = torch.ones(2, 3, 6, dtype=torch.float64)
    out = toy.learned_forward(4, 6, x, table=table, dtype="float64")
    assert out.dtype == torch.float64 and torch.equal(out, x + table[:3].double())
    info = toy.learned_forward(4, 6, torch.empty(2, 3, 6, device="meta"), device="meta")
    assert info.shape == (2, 3, 6) and info.device == "meta"


def test_errors_keep_their_kind_and_message(toy):
    with pytest.raises(StudentError) as caught:
        toy.sinusoidal_encoding(-5, 4)
    assert caught.value.kind == "ValueError" and "-5" in caught.value.message


def test_not_implemented_and_wrong_return_types(toy):
    with pytest.raises(NotImplementedBySubmission):
        toy.sinusoidal_encoding(0, 4)
    # The grader's finding, sent as one (not an error frame): the type, and its values converted.
    returned = toy.call("sinusoidal_encoding", 1, 4)
    assert returned.output == NotATensor("int", None) and returned.notes == ()
    with pytest.raises(NotImplementedBySubmission) as missing:
        toy.alibi_bias(2, 3)
    assert missing.value.name == "alibi_bias"


def test_a_call_past_the_time_limit_crashes_the_exercise_for_good(toy):
    started = time.monotonic()
    with pytest.raises(SubmissionCrashed) as first:
        toy.sinusoidal_encoding(13, 4)
    assert "time limit" in first.value.reason
    assert time.monotonic() - started < SETTINGS.timeout + 5
    with pytest.raises(SubmissionCrashed):
        toy.attention(torch.ones(1, 2), torch.ones(1, 2), torch.ones(1, 2))


def test_call_overhead_is_measured(toy):
    overhead = toy.call_overhead_seconds()
    assert 0 < overhead < 0.5


def test_the_child_sees_no_project_no_network_and_runs_unprivileged(worker):
    # (PROJECT_ROOT itself may exist, empty: CI's venv lives inside the project and is mounted)
    hidden = [
        os.path.join(PROJECT_ROOT, "poslab", "exercises.py"),
        os.path.join(PROJECT_ROOT, "grader", "suite", "student.py"),
        "/etc/passwd",
    ]
    probe = textwrap.dedent(f"""
        import os, socket, sys, torch

        def alibi_slopes(n_heads):
            flags = [os.path.exists(path) for path in {hidden!r}]
            for module in ("poslab", "grader", "grader.suite"):
                try:
                    __import__(module)
                    flags.append(True)
                except ImportError:
                    flags.append(False)
            try:
                socket.create_connection(("127.0.0.1", 22), timeout=1).close()
                flags.append(True)
            except OSError:
                flags.append(False)
            flags.append(os.getuid() == 0 or os.geteuid() == 0)
            flags.append(bool(os.environ.get("HOME", "").startswith({PROJECT_ROOT!r})))
            flags.append(any(name.partition(".")[0] == "sandbox_runner" for name in sys.modules))
            flags.append(any(getattr(finder, "package", None) == "sandbox_runner" for finder in sys.meta_path))
            return torch.tensor(flags)
    """)
    sandbox = SubmissionSandbox(worker, {"probe.py": probe}, SETTINGS.timeout)
    try:
        flags = sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1)
    finally:
        sandbox.close()
    assert flags.dtype == torch.bool and flags.numel() == 11
    assert not flags.any(), f"visible/importable/privileged: {flags.tolist()}"


def test_calls_made_ahead_answer_as_one_at_a_time_does(toy):
    """``call_many`` sends a small call before the previous answer is in, a large one after: the answers are
    the same, in order, errors included."""
    x = torch.randn(2, 3, 4)
    large = torch.randn(64, 256)  # 64 KiB: past the pipelined size, sent when nothing waits
    calls = [
        ("sinusoidal_encoding", (2, 4), {}),
        ("sinusoidal_encoding", (-5, 4), {}),
        ("apply_rope", (x,), {}),
        ("apply_rope", (large,), {}),
        ("alibi_bias", (2, 3), {}),
        ("sinusoidal_encoding", (3, 6), {}),
    ]
    outcomes = toy.call_many(calls, wait_seconds=1.0)
    assert outcomes[0].output.shape == (2, 4) and outcomes[5].output.shape == (3, 6)
    assert isinstance(outcomes[1], StudentError) and "-5" in outcomes[1].message
    assert isinstance(outcomes[4], NotImplementedBySubmission) and outcomes[4].name == "alibi_bias"
    for index, tensor in ((2, x), (3, large)):
        assert torch.equal(outcomes[index].output[0], tensor.reshape(-1))  # apply_rope's toy: its input's values
        assert torch.equal(outcomes[index].output, toy.call("apply_rope", tensor).output)


def test_a_call_made_ahead_that_runs_long_is_given_up_at_no_cost_to_the_exercises_time(toy):
    before = toy.session.budget
    started = time.monotonic()
    outcomes = toy.call_many(
        [
            ("sinusoidal_encoding", (2, 4), {}),
            ("sinusoidal_encoding", (13, 4), {}),
            ("sinusoidal_encoding", (3, 4), {}),
        ],
        wait_seconds=0.3,
    )
    assert time.monotonic() - started < 1.0  # not the 1.5 s a call may take in this exercise
    assert outcomes[0].output.shape == (2, 4) and outcomes[1:] == [None, None]  # none charged to a test
    assert toy.session.gave_up and toy.session.crash is not None  # the child is gone: the next test gets another
    assert before - toy.session.budget < 0.25  # the first call's wait only


def test_a_call_made_ahead_that_ends_the_child_is_that_calls_crash(worker):
    source = "import os, torch\n\ndef sinusoidal_encoding(seq_len, d_model, base=10000.0):\n"
    source += "    if seq_len == 7:\n        os._exit(3)\n    return torch.zeros(seq_len, d_model)\n"
    sandbox = SubmissionSandbox(worker, {"ends.py": source}, SETTINGS.timeout)
    try:
        student = sandbox.for_exercise(["ends.py"], ["sinusoidal_encoding"])
        calls = [("sinusoidal_encoding", (seq_len, 2), {}) for seq_len in (2, 7, 3)]
        outcomes = student.call_many(calls, wait_seconds=1.0)
        assert outcomes[0].output.shape == (2, 2) and outcomes[2] is None
        assert isinstance(outcomes[1], SubmissionCrashed) and "ended" in outcomes[1].reason
        assert not student.session.gave_up
    finally:
        sandbox.close()


def test_calls_made_ahead_in_a_child_that_already_crashed_make_nothing(toy):
    with pytest.raises(SubmissionCrashed):
        toy.sinusoidal_encoding(13, 4)  # past the time limit: the child is gone for this exercise
    assert toy.call_many([("sinusoidal_encoding", (2, 4), {})], wait_seconds=1.0) == [None]
