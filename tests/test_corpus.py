"""The grader on code written the way other people write it (tests/corpus, issue 11).

* every ``correct/c*.py``, ``batch3/correct/b3c*.py``, ``batch4/`` to ``batch8/correct/b*c*.py``
  gets full marks on every exercise it implements;
* every bug of ``corpus/bugs.py`` (one realistic mistake each, written as edits to a correct file)
  and of ``batch3/bugs/`` to ``batch8/bugs/`` (written independently, from the stubs and
  the public tests only, each one changed line of a correct file of its batch; its first line names its
  exercise and its base) loses points in its own exercise and nowhere else (batches 4, 5 and 6 are decode,
  extend and t5 alone, batch 7's files decode, extend, learned or rope each, batch 8's attention, sinusoidal,
  alibi or t5: their files define nothing else, so they are graded on that exercise);
* every file of ``batch8/spec_silent/`` (a mistake the spec does not forbid) gets full marks.
  A bug is graded on every exercise its change can reach (``tests/corpus/reach.py``: what the exercise's
  names lead to through the file); the others run its base's code unchanged, and the base gets full marks.

The catalogue's mutants are judged in ``tests/test_suite_scores.py`` (each loses points in its exercise);
``python -m grader validate`` grades them all through the sandbox (``tests/test_grader_cli.py`` runs it
on two exercises).

For the buggy files, the tests each one fails are printed (``pytest -s``): read that
list to check that no test fails for a reason other than the bug. Everything is graded in one
sandboxed ``Grader`` (one warm worker, shared: ``warm_grader``, with an 8 s limit per exercise), so the file takes well under a minute.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grader.api import Grader, load_submission
from grader.results import SubmissionResult
from poslab.exercises import EXERCISE_IDS, EXERCISES
from tests.corpus.bugs import BUGS, Bug
from tests.corpus.reach import exercises_reached
from tests.grading_fixtures import on_the_warm_worker

CORPUS = Path(__file__).parent / "corpus"
CORRECT = sorted((CORPUS / "correct").glob("c*.py"))
BATCH3_CORRECT = sorted((CORPUS / "batch3" / "correct").glob("b3c*.py"))
BATCH3_BUGS = sorted((CORPUS / "batch3" / "bugs").glob("b3b*.py"))
BATCH4_CORRECT = sorted((CORPUS / "batch4" / "correct").glob("b4c*.py"))
BATCH4_BUGS = sorted((CORPUS / "batch4" / "bugs").glob("b4b*.py"))
BATCH5_CORRECT = sorted((CORPUS / "batch5" / "correct").glob("b5c*.py"))
BATCH5_BUGS = sorted((CORPUS / "batch5" / "bugs").glob("b5b*.py"))
BATCH6_CORRECT = sorted((CORPUS / "batch6" / "correct").glob("b6c*.py"))
BATCH6_BUGS = sorted((CORPUS / "batch6" / "bugs").glob("b6b*.py"))
BATCH7_CORRECT = sorted((CORPUS / "batch7" / "correct").glob("b7*c*.py"))
BATCH7_BUGS = sorted((CORPUS / "batch7" / "bugs").glob("b7*b*.py"))
BATCH8_CORRECT = sorted((CORPUS / "batch8" / "correct").glob("b8*c*.py"))
BATCH8_BUGS = sorted((CORPUS / "batch8" / "bugs").glob("b8*b*.py"))
# Mistakes the spec does not forbid (a cached tensor handed out, which a caller's in-place edit changes): full marks.
BATCH8_SPEC_SILENT = sorted((CORPUS / "batch8" / "spec_silent").glob("b8*.py"))
INDEPENDENT_CORRECT = (
    CORRECT + BATCH3_CORRECT + BATCH4_CORRECT + BATCH5_CORRECT + BATCH6_CORRECT + BATCH7_CORRECT + BATCH8_CORRECT
)


# Each corpus file's exercise takes well under a second; a file that hangs (b6b04 loops forever on some
# tables) waits half this per hanging call instead of half the default 20 s.
CORPUS_TIMEOUT = 8.0


@pytest.fixture(scope="module")
def grading(warm_grader):
    with on_the_warm_worker(warm_grader, timeout=CORPUS_TIMEOUT) as grader:  # each submission: a child of its own
        yield grader


def implemented(source: str) -> list[str]:
    """The exercises whose names the file defines at its top level (a corpus file written before an
    exercise existed is graded on the others)."""
    defined = {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    return [exercise.id for exercise in EXERCISES if set(exercise.names) <= defined]


def grade(grading: Grader, name: str, source: str, exercises: list[str] | None = None) -> SubmissionResult:
    submission = load_submission({"solution.py": source}, name, grading.settings)
    return grading.grade(submission, exercises=exercises or implemented(source))


def without_first_line(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n", 1)[1]


def reached_from(base: Path, source: str, exercise: str) -> list[str]:
    """The exercises to grade a bug on: its own, and every other its change reaches in its base
    (all it implements when that cannot be told). The base must be a correct file graded here."""
    assert base in INDEPENDENT_CORRECT, f"{base} is not a correct file of the corpus"
    defined = implemented(source)
    reached = exercises_reached(
        without_first_line(base), source.split("\n", 1)[1], [e for e in EXERCISES if e.id in defined]
    )
    return defined if reached is None else [e for e in defined if e in {*reached, exercise}]


def failures(result: SubmissionResult) -> list[str]:
    return [
        f"    {test.name} [{test.max_score:g}, {test.visibility}] {test.output}"
        for test in result.tests
        if test.status != "passed"
    ]


def lost_by_exercise(result: SubmissionResult) -> dict[str, float]:
    return {
        exercise: score.max_score - score.score
        for exercise, score in result.exercises.items()
        if score.max_score - score.score > 0
    }


def test_the_corpus_is_large_enough_and_covers_every_exercise():
    assert len(CORRECT) >= 12 and len(BUGS) >= 20
    assert {bug.exercise for bug in BUGS} <= set(EXERCISE_IDS)
    covered = {exercise for path in INDEPENDENT_CORRECT for exercise in implemented(path.read_text(encoding="utf-8"))}
    assert covered == set(EXERCISE_IDS)
    assert all(len(implemented(path.read_text(encoding="utf-8"))) >= 5 for path in CORRECT)


@pytest.mark.parametrize("path", INDEPENDENT_CORRECT, ids=lambda path: path.stem)
def test_every_correct_style_gets_full_marks(grading, path):
    result = grade(grading, path.stem, path.read_text(encoding="utf-8"))
    assert result.status == "graded"
    assert result.score == result.max_score > 0, "\n".join([f"{path.name}:"] + failures(result))


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.name)
def test_every_buggy_file_loses_points_in_its_own_exercise_only(grading, bug: Bug):
    source = bug.source()
    result = grade(grading, bug.name, source, reached_from(CORPUS / "correct" / f"{bug.base}.py", source, bug.exercise))
    print(f"\n{bug.name} ({bug.mistake}; should fail: {bug.should_fail})")
    print("\n".join(failures(result)))
    assert result.status == "graded"
    assert set(lost_by_exercise(result)) == {bug.exercise}, "\n".join(failures(result))


def bug_base(path: Path) -> Path:
    """The correct file a batch 3 bug was made from, as its first line names it: '... Base: correct/NAME.py'."""
    found = re.search(r"Base: correct/(\w+)\.py", path.read_text(encoding="utf-8").splitlines()[0])
    return path.parent.parent / "correct" / f"{found.group(1)}.py"


def bug_exercise(path: Path) -> str:
    """The exercise an independently written bug is in, as its first line names it: '# Bug (rope): ...'
    (batch 3) or '# decode bug (base ...): ...' (batches 4 and 5)."""
    first_line = path.read_text(encoding="utf-8").splitlines()[0]
    found = re.match(r"# (?:Bug \((\w+)\)|(\w+) bug\b)", first_line)
    return found.group(1) or found.group(2)


def test_the_independent_batches_are_whole():
    assert len(BATCH3_CORRECT) == 10 and len(BATCH3_BUGS) == 10
    assert len(BATCH4_CORRECT) == 8 and len(BATCH4_BUGS) == 8
    assert all(bug_exercise(path) in EXERCISE_IDS for path in BATCH3_BUGS)
    assert {bug_exercise(path) for path in BATCH4_BUGS} == {"decode"}
    assert all(implemented(path.read_text(encoding="utf-8")) == ["decode"] for path in BATCH4_CORRECT + BATCH4_BUGS)
    assert len(BATCH5_CORRECT) == 8 and len(BATCH5_BUGS) == 8
    assert {bug_exercise(path) for path in BATCH5_BUGS} == {"extend"}
    assert all(implemented(path.read_text(encoding="utf-8")) == ["extend"] for path in BATCH5_CORRECT + BATCH5_BUGS)
    assert len(BATCH6_CORRECT) == 5 and len(BATCH6_BUGS) == 8
    assert {bug_exercise(path) for path in BATCH6_BUGS} == {"t5"}
    assert all(implemented(path.read_text(encoding="utf-8")) == ["t5"] for path in BATCH6_CORRECT + BATCH6_BUGS)
    assert len(BATCH7_CORRECT) == 23 and len(BATCH7_BUGS) == 31
    assert len(BATCH8_CORRECT) == 21 and len(BATCH8_BUGS) == 27 and len(BATCH8_SPEC_SILENT) == 2
    for path in BATCH7_CORRECT + BATCH7_BUGS + BATCH8_CORRECT + BATCH8_BUGS + BATCH8_SPEC_SILENT:  # one exercise a file
        assert implemented(path.read_text(encoding="utf-8")) == [exercise_of_name(path)], path.name
    assert all(bug_exercise(path) == exercise_of_name(path) for path in BATCH7_BUGS + BATCH8_BUGS)


# Batches 7 and 8 name a file b<batch><tag>...: the tag is its exercise.
EXERCISE_OF_TAG = {
    "7": {"d": "decode", "e": "extend", "l": "learned", "r": "rope"},
    "8": {"a": "attention", "s": "sinusoidal", "b": "alibi", "t": "t5"},
}


def exercise_of_name(path: Path) -> str:
    return EXERCISE_OF_TAG[path.name[1]][path.name[2]]


@pytest.mark.parametrize("path", BATCH8_SPEC_SILENT, ids=lambda path: path.stem)
def test_what_the_spec_does_not_forbid_costs_nothing(grading, path):
    result = grade(grading, path.stem, path.read_text(encoding="utf-8"))
    assert result.status == "graded"
    assert result.score == result.max_score > 0, "\n".join([f"{path.name}:"] + failures(result))


@pytest.mark.parametrize(
    "path",
    BATCH3_BUGS + BATCH4_BUGS + BATCH5_BUGS + BATCH6_BUGS + BATCH7_BUGS + BATCH8_BUGS,
    ids=lambda path: path.stem,
)
def test_every_independent_bug_loses_points_in_its_own_exercise_only(grading, path):
    source = path.read_text(encoding="utf-8")
    exercises = reached_from(bug_base(path), source, bug_exercise(path)) if path in BATCH3_BUGS else None
    result = grade(grading, path.stem, source, exercises)
    print(f"\n{path.stem}")
    print("\n".join(failures(result)))
    assert result.status == "graded"
    assert set(lost_by_exercise(result)) == {bug_exercise(path)}, "\n".join(failures(result))


# A made-up file for the reach of a change: rope and decode share a helper, attention stands alone.
SHARED_HELPER = """import math

SCALE = 2.0
ROPES = {"plain": None}


def _angles(n):
    return [i * SCALE for i in range(n)]


def apply_rope(x):
    return _angles(len(x))


def decode(x):
    return apply_rope(x)


def attention(q):
    return math.sqrt(len(q))
"""
THREE = [exercise for exercise in EXERCISES if exercise.id in ("attention", "rope", "decode")]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("return [i * SCALE for i in range(n)]", "return [i * SCALE for i in range(1, n + 1)]", ["rope", "decode"]),
        ("return apply_rope(x)", "return apply_rope(x)[::-1]", ["decode"]),
        ("return math.sqrt(len(q))", "return len(q)", ["attention"]),
        # run at import: anything may read it
        ("SCALE = 2.0", "SCALE = 3.0", None),
        # a decorator may put the function anywhere
        (
            "def attention(q):\n    return math.sqrt(len(q))",
            "@staticmethod\ndef attention(q):\n    return len(q)",
            None,
        ),
        # a statement added: the two files' statements no longer pair up
        (
            'ROPES = {"plain": None}\n\n\ndef _angles(n):\n    return [i * SCALE for i in range(n)]',
            'ROPES = {"plain": None}\n\n\ndef _angles(n):\n    return [i * SCALE for i in range(n)]\n\n\nROPES["plain"] = _angles',
            None,
        ),
        # a name computed at run time may lead anywhere
        ("return math.sqrt(len(q))", "return globals()['math'].sqrt(len(q))", None),
    ],
)
def test_the_reach_of_a_change_follows_names_through_the_file(old, new, expected):
    assert SHARED_HELPER.count(old) == 1
    assert exercises_reached(SHARED_HELPER, SHARED_HELPER.replace(old, new), THREE) == expected


def test_a_change_reached_through_a_module_table_reaches_its_readers():
    base = SHARED_HELPER.replace('ROPES = {"plain": None}', "ROPES = {}").replace(
        "def apply_rope(x):\n    return _angles(len(x))", 'def apply_rope(x):\n    return TABLE["plain"](len(x))'
    )
    base += '\n\nTABLE = {"plain": _angles}\n'
    changed = base.replace("range(n)", "range(n + 1)")
    assert exercises_reached(base, changed, THREE) == ["rope", "decode"]


def test_a_change_that_can_touch_a_variable_of_the_file_reaches_its_other_readers():
    base = SHARED_HELPER.replace(
        "def attention(q):\n    return math.sqrt(len(q))",
        "def attention(q):\n    return math.sqrt(len(q)) + len(ROPES)",
    )
    changed = base.replace(
        "return [i * SCALE for i in range(n)]", 'ROPES["last"] = n\n    return [i * SCALE for i in range(n)]'
    )
    assert exercises_reached(base, changed, THREE) == ["attention", "rope", "decode"]
