"""The sandboxed Student: the contract of grader/student.py, kept across the process boundary,
and what the child can and cannot see. Expected values are computed here, in the judging process.

These tests need bubblewrap (skip with the reason locally, fail under CI=true); the fallback,
which needs nothing, is test_grader_fallback.py's.
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
from tests.hostile._support import PROBE_MAX, ProbeSuite, reference_submission, require_bwrap

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = GraderSettings(timeout=3.0)

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


@pytest.fixture(scope="module")
def worker():
    require_bwrap()
    process = WorkerProcess(SETTINGS, isolation="bwrap")
    yield process
    process.close()


@contextmanager
def grading_on(worker: WorkerProcess, settings: GraderSettings = SETTINGS, **grader) -> Iterator[Grader]:
    """A Grader on the module's warm sandbox worker (each submission still gets a child of its own)."""
    grading = Grader(settings, **grader)
    grading.worker = worker
    try:
        yield grading
    finally:
        if grading.worker is worker:
            grading.worker = None  # the module's fixture closes it
        grading.close()  # a worker started in its place (the module's had died)


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


def test_a_full_submission_scores_full_marks_and_records_bwrap(worker):
    with grading_on(worker, suite=ProbeSuite) as grading:
        result = grading.grade(load_submission({"mine.py": reference_submission()}))
    assert (result.score, result.max_score, result.status) == (PROBE_MAX, PROBE_MAX, "graded")
    assert result.isolation == "bwrap"


def test_a_grader_fingerprints_its_suite_once(worker):
    class CountedSuite(ProbeSuite):
        fingerprints = 0

        @classmethod
        def suite_hash(cls):
            cls.fingerprints += 1
            return f"probe-suite-{cls.fingerprints}"

    with grading_on(worker, suite=CountedSuite) as grading:
        results = [grading.grade(load_submission({"mine.py": reference_submission()})) for _ in range(3)]
    assert CountedSuite.fingerprints == 1
    assert {result.suite_hash for result in results} == {"probe-suite-1"}


def test_import_problems_are_sentences_and_cost_only_their_exercise(worker, tmp_path):
    folder = tmp_path / "carol"
    folder.mkdir()
    # attention.py defines attention and sinusoidal_encoding only
    good = reference_submission() + "\ndel LearnedPositionalEmbedding, apply_rope, alibi_slopes, alibi_bias\n"
    (folder / "attention.py").write_text(good)
    (folder / "rope.py").write_text("while True:\n    pass\n")
    (folder / "alibi.py").write_text("import torch\n\n\ndef alibi_slopes(n_heads:\n    return 1\n")
    (folder / "learned.py").write_text("from poslab.encodings import LearnedPositionalEmbedding\n")
    (folder / "test_mine.py").write_text("raise SystemExit('never imported')\n")
    with grading_on(worker, suite=ProbeSuite) as grading:
        result = grading.grade(load_submission(folder))
    scores = {exercise: score.score for exercise, score in result.exercises.items()}
    # sinusoidal_encoding is found in attention.py; learned looks through every file and hangs in rope.py
    assert scores == {
        "attention": 2.0,
        "sinusoidal": 2.0,
        "learned": 0.0,
        "rope": 0.0,
        "alibi": 0.0,
        "t5": 0.0,
        "decode": 0.0,
        "extend": 0.0,
    }
    assert result.status == "import_failed"
    # What did not import is one message, not a "not implemented" failure per test (issue 11).
    named = ("attention", "sinusoidal", "learned", "rope", "alibi")
    assert {exercise: result.exercise_status(exercise) for exercise in named} == {
        "attention": "graded",
        "sinusoidal": "graded",
        "learned": "did_not_import",
        "rope": "did_not_import",
        "alibi": "did_not_import",
    }
    assert not any("not implemented" in test.output for test in result.tests)
    text = " ".join(result.messages)
    assert "alibi.py could not be imported: SyntaxError on line 4" in text
    assert "rope.py could not be imported" in text and "time limit" in text
    assert "poslab" in text and "not available when grading" in text
    assert "test_mine.py" not in text


def public_test_names(exercise: str) -> set[str]:
    """The test functions of exercises/test_<exercise>.py, read from the file itself."""
    import ast

    tree = ast.parse(open(os.path.join(PROJECT_ROOT, "exercises", f"test_{exercise}.py")).read())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_a_practice_run_of_one_exercise_runs_its_public_tests_and_no_others(worker):
    """The app's "Run the public tests" pays for one exercise's tests, each of them, all passed."""
    with grading_on(worker, mode="public") as grading:  # pytest is imported in the child, not preloaded
        result = grading.grade(load_submission({"rope.py": reference_source()}), ["rope"])
    ran = {test.name.split("::")[-1].split("[")[0] for test in result.tests}
    assert ran == public_test_names("rope")
    assert {test.exercise for test in result.tests} == {"rope"}
    assert all(test.status == "passed" for test in result.tests), [
        t.output for t in result.tests if t.status != "passed"
    ]


# A submission that says, as its import error, whether its child inherited torch's meta kernels.
META_PROBE = "import sys\nraise RuntimeError(sorted({'torch._dynamo', 'sympy'} & set(sys.modules)))\n"


def meta_modules_a_child_inherits(worker: WorkerProcess) -> str:
    sandbox = SubmissionSandbox(worker, {"probe.py": META_PROBE}, SETTINGS.timeout)
    try:
        return sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()


def test_a_hidden_tests_worker_warms_the_meta_device_and_a_public_tests_worker_does_not(worker):
    """The hidden tests run ops on the meta device, whose first op imports sympy (half a second): their
    children inherit it, without torch._dynamo (``worker.spare_dynamo_import``). The public tests never
    do, and their worker starts without it."""
    assert meta_modules_a_child_inherits(worker) == "['sympy']"
    public = WorkerProcess(SETTINGS, isolation="bwrap", preload=("pytest",), meta_kernels=False)
    try:
        assert meta_modules_a_child_inherits(public) == "[]"
    finally:
        public.close()


META_OPS_PROBE = textwrap.dedent("""
    import sys, torch

    def alibi_slopes(n_heads):
        m = torch.empty(2, 5, 8, device="meta")
        half = torch.arange(0, 8, 2, device="meta") / 8
        angles = torch.outer(torch.arange(5, device="meta").float(), 10000.0 ** -half)
        turned = torch.view_as_real(torch.polar(torch.ones_like(angles), angles) * torch.view_as_complex(
            m.reshape(2, 5, 4, 2)))
        scores = torch.softmax(m @ m.transpose(-2, -1) / 8**0.5 + torch.empty(5, 5, device="meta").triu(1), -1)
        mixed = torch.where(m > 0, m, -m).masked_fill(torch.ones(5, 8, dtype=torch.bool, device="meta"), 0.0)
        table = torch.nn.Embedding(6, 8).to("meta")(torch.zeros(3, dtype=torch.long, device="meta"))
        layer = torch.nn.Linear(8, 8).to(torch.float64).to("meta")(m.double())
        buckets = torch.log(m.abs() + 1).floor().long().clamp(max=7) + torch.bucketize(m, torch.empty(3, device="meta"))
        parts = (turned, scores @ m, mixed, table, layer, buckets, torch.cat([m[..., 0::2], m[..., 1::2]], -1).half())
        return torch.tensor([len(parts), "torch._dynamo" in sys.modules])
""")


def test_a_childs_meta_device_ops_import_no_dynamo(worker):
    """The ops a RoPE, ALiBi, T5 or attention submission runs on the meta device go through torch's
    Python kernels; none of them imports torch._dynamo in the child (a second each)."""
    sandbox = SubmissionSandbox(worker, {"probe.py": META_OPS_PROBE}, SETTINGS.timeout)
    try:
        ran, imported = sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1).tolist()
    finally:
        sandbox.close()
    assert (ran, imported) == (7, 0)


HUGE_PAGES_PROBE = (
    "import re\n"
    "raise RuntimeError(re.search(r'AnonHugePages:\\s+(\\d+)', open('/proc/self/smaps_rollup').read()).group(1))\n"
)


def test_a_child_inherits_a_worker_heap_on_huge_pages(worker):
    """A child per submission is a fork of the worker, which copies its page tables: with the heap on
    transparent huge pages they are smaller (``grader.sandbox.isolation.worker_environment``)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as handle:
            allowed = "[never]" not in handle.read()
    except FileNotFoundError:
        allowed = False
    if not allowed:
        pytest.skip("this kernel gives no process transparent huge pages")
    sandbox = SubmissionSandbox(worker, {"probe.py": HUGE_PAGES_PROBE}, SETTINGS.timeout)
    try:
        kib = sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()
    assert int(kib) >= 32 * 1024, f"only {kib} KiB of the child's memory is on huge pages"


MARKING_PROBE = textwrap.dedent("""
    import os, torch

    def alibi_slopes(n_heads):
        seen = getattr(torch, "_left_by_an_earlier_submission", None)
        torch._left_by_an_earlier_submission = os.getuid()
        return torch.tensor([os.getuid(), -1 if seen is None else seen])
""")


def live_uids(uids: range) -> dict[int, int]:
    """pid -> uid of the live processes on this machine whose real uid is in ``uids``."""
    found = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                fields = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
        except OSError:
            continue
        uid = int(fields["Uid"].split()[0])
        if uid in uids and fields.get("State", "").strip()[:1] not in ("Z", "X"):
            found[int(entry)] = uid
    return found


def test_each_submission_gets_a_fresh_child_though_the_next_is_forked_ahead(worker):
    """A finished grading's child is ended, and the next forked, while nobody waits
    (``WorkerProcess.release``): the next submission still sees nothing the last one left."""
    answers = []
    for _ in range(3):
        sandbox = SubmissionSandbox(worker, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
        try:
            answers.append(
                [int(value) for value in sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1)]
            )
        finally:
            sandbox.close()
    assert [seen for _, seen in answers] == [-1, -1, -1], "a submission saw what an earlier one left in torch"
    uids = [uid for uid, _ in answers]
    assert len(set(uids)) == 3
    if os.geteuid() == 0:  # (each child has a uid of its own only when the worker may give one)
        worker.spawn().close()
        worker.reap()  # settles every answer owed: each earlier child has been killed and reaped by now
        assert set(live_uids(range(min(uids), max(uids) + 1)).values()).isdisjoint(uids)


def test_a_worker_that_dies_after_a_release_is_a_fault_at_the_next_spawn():
    require_bwrap()
    doomed = WorkerProcess(SETTINGS, isolation="bwrap")
    try:
        sandbox = SubmissionSandbox(doomed, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
        sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1)
        sandbox.close()
        os.killpg(doomed.process.pid, 9)
        doomed.process.wait()
        with pytest.raises(GraderFault, match="the grading worker failed"):
            SubmissionSandbox(doomed, {"probe.py": MARKING_PROBE}, SETTINGS.timeout).for_exercise(["probe.py"], [])
        assert doomed.next_child is None and doomed.owed == []
    finally:
        doomed.close()


def test_a_child_that_died_while_it_waited_is_replaced_before_the_next_submission(worker):
    if os.geteuid() != 0:
        pytest.skip("the test finds the waiting child by its uid, which only root gives it")
    children = range(worker.first_uid, worker.first_uid + 256)
    worker.spawn().close()
    worker.reap()
    worker.release()  # as after any grading: the next child forked ahead
    deadline = time.monotonic() + 10
    while not (waiting := live_uids(children)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(waiting) == 1, f"expected one child waiting, found {waiting}"
    for pid in waiting:
        os.kill(pid, 9)
    while live_uids(children) and time.monotonic() < deadline:
        time.sleep(0.01)
    sandbox = SubmissionSandbox(worker, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
    try:
        student = sandbox.for_exercise(["probe.py"], ["alibi_slopes"])
        uid, _ = student.alibi_slopes(1).tolist()
    finally:
        sandbox.close()
    assert student.crash is None and uid not in waiting.values()


@pytest.mark.parametrize("exercise", [item.id for item in EXERCISES])
def test_an_exercises_own_reference_file_scores_full_marks_on_it(worker, exercise):
    """``reference_source(exercise)``: the file a student hands in for one exercise (the benchmarks' submission)."""
    files = {get_exercise(exercise).filename: reference_source(exercise)}
    with grading_on(worker) as grading:
        result = grading.grade(load_submission(files), [exercise])
    assert result.max_score > 0 and result.score == result.max_score, [
        test.output for test in result.tests if test.status != "passed"
    ]
