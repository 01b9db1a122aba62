"""Grading through the sandbox: ``grader.api.Grader`` on a warm bubblewrap worker, whole submissions
(scores, import problems, practice runs, the suite's fingerprint). The sandboxed Student itself is
test_grader_sandbox.py's. These tests need bubblewrap (skip with the reason locally, fail under CI=true).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from grader.api import Grader, load_submission
from grader.mutants import reference_source
from grader.sandbox import WorkerProcess
from grader.settings import GraderSettings
from poslab.exercises import EXERCISES, get_exercise
from tests.hostile._support import PROBE_MAX, SANDBOX_SETTINGS, ProbeSuite, reference_submission, require_bwrap

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = SANDBOX_SETTINGS


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
@pytest.mark.parametrize("exercise", [item.id for item in EXERCISES])
def test_an_exercises_own_reference_file_scores_full_marks_on_it(worker, exercise):
    """``reference_source(exercise)``: the file a student hands in for one exercise (the benchmarks' submission)."""
    files = {get_exercise(exercise).filename: reference_source(exercise)}
    with grading_on(worker) as grading:
        result = grading.grade(load_submission(files), [exercise])
    assert result.max_score > 0 and result.score == result.max_score, [
        test.output for test in result.tests if test.status != "passed"
    ]


def test_the_shared_calls_made_ahead_change_no_grade(worker):
    """A judge plans its shared calls when it warms up (``grader.suite.prepare``) and makes them ahead of each
    exercise's tests; the reference and a mutant of decode and of t5 (the most shared calls) get the outcomes
    they get without (every named mutant, decode's in process: test_plan.py)."""
    import types

    import grader.suite as hidden
    from grader.mutants import list_mutants

    hidden.prepare()
    one_at_a_time = types.SimpleNamespace(
        collect=hidden.collect, run_case=hidden.run_case, suite_hash=hidden.suite_hash
    )
    firsts = {}
    for mutant in list_mutants():
        if not mutant.slow and mutant.exercise in ("decode", "t5"):
            firsts.setdefault(mutant.exercise, mutant.source)
    for source in (reference_source(), *firsts.values()):
        submission = load_submission({"mine.py": source})
        with (
            grading_on(worker, GraderSettings()) as ahead,
            grading_on(worker, GraderSettings(), suite=one_at_a_time) as plain,
        ):
            assert [(t.name, t.status, t.score, t.output) for t in ahead.grade(submission).tests] == [
                (t.name, t.status, t.score, t.output) for t in plain.grade(submission).tests
            ]
