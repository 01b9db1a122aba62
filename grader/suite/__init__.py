"""The hidden test suite: one package per exercise, ``grader/suite/<id>/``, found from the catalogue.

A package holds its exercise's tests (``test_*.py``: plain functions ``def test_...(student)``),
cases, oracle, tolerances and known mistakes, and, for instructors only, its mutants, recorded
equivalents, correct variants and spec clauses. What every exercise shares stays here: drawing
(``draw``), the error model (``tolerances``), messages (``expect``), layouts and timing.
A test declares its points, family and visibility with ``@graded(...)``; the first line of its
docstring states its property. ``collect()`` gathers the tests, ``run_case()`` runs one,
``run_suite()`` runs them all, ``suite_hash()`` fingerprints them, ``prepare()`` draws ahead.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from grader import suite_files
from grader.results import TestOutcome
from grader.student import CannotCheck, NotImplementedBySubmission, Student, StudentError, SubmissionCrashed
from grader.suite.plan import planned_calls, prefetch  # noqa: F401 -- prefetch: the Grader's, per exercise
from grader.vocabulary import NOT_IMPLEMENTED, Visibility
from poslab.exercises import EXERCISE_IDS
from poslab.vocabulary import TestStatus

SUITE_DIR = suite_files.SUITE_DIR
VISIBILITIES = tuple(Visibility)
VISIBLE, HIDDEN = Visibility.VISIBLE, Visibility.HIDDEN  # what the tests declare
INSTRUCTOR_MODULES = suite_files.INSTRUCTOR_MODULES
MAX_STUDENT_MESSAGE = 300  # characters of the submission's own error message we echo back


@dataclass(frozen=True)
class Grading:
    """What ``@graded`` attaches to a test function."""

    points: float
    family: str
    visibility: Visibility
    exercise: str | None


def graded(points: float, family: str, visibility: Visibility = HIDDEN, exercise: str | None = None):
    """Declare a test's points, property family and visibility (and, rarely, its exercise)."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}, got {visibility!r}")
    if points <= 0:
        raise ValueError(f"points must be positive, got {points}")
    if exercise is not None and exercise not in EXERCISE_IDS:
        raise ValueError(f"unknown exercise {exercise!r}; known: {', '.join(EXERCISE_IDS)}")

    def mark(func: Callable[[Student], None]) -> Callable[[Student], None]:
        func.grading = Grading(float(points), family, Visibility(visibility), exercise)
        return func

    return mark


@dataclass(frozen=True)
class TestCase:
    __test__ = False  # not a pytest test class, despite its name

    name: str
    exercise: str
    points: float
    visibility: Visibility
    family: str
    func: Callable[[Student], None]

    @property
    def statement(self) -> str:
        """The property the test checks: the first line of its docstring."""
        return (self.func.__doc__ or "").strip().splitlines()[0].rstrip(".")


def _exercise_of(module_name: str, grading: Grading, func_name: str) -> str:
    exercise = grading.exercise or module_name.split(".")[0]
    if exercise not in EXERCISE_IDS:
        raise ValueError(
            f"{module_name}.{func_name}: cannot tell its exercise; "
            f"put the module in grader/suite/<exercise>/ or pass exercise= to @graded"
        )
    return exercise


def _cases_in(module_name: str) -> list[TestCase]:
    module = importlib.import_module(f"{__name__}.{module_name}")
    cases = []
    for func_name, func in vars(module).items():  # definition order
        if not (func_name.startswith("test_") and inspect.isfunction(func) and func.__module__ == module.__name__):
            continue  # helpers, and tests imported from another module (collected there)
        grading = getattr(func, "grading", None)
        if grading is None:
            raise ValueError(f"{module_name}.{func_name} has no @graded(points=..., family=...)")
        if not (func.__doc__ or "").strip():
            raise ValueError(f"{module_name}.{func_name} needs a docstring stating its property")
        exercise = _exercise_of(module_name, grading, func_name)
        label = func_name.removeprefix("test_").replace("_", " ")
        cases.append(
            TestCase(f"{exercise}: {label}", exercise, grading.points, grading.visibility, grading.family, func)
        )
    return cases


def exercise_dir(exercise_id: str) -> Path:
    """The hidden side of one exercise: ``grader/suite/<id>/``."""
    return SUITE_DIR / exercise_id


def suite_modules() -> list[str]:
    """The test modules, relative to this package ("rope.test_rope"), exercise by exercise."""
    return [
        f"{exercise_id}.{path.stem}"
        for exercise_id in EXERCISE_IDS
        for path in sorted(exercise_dir(exercise_id).glob("test_*.py"))
    ]


def collect() -> tuple[TestCase, ...]:
    """Every graded test, module by module in exercise order, in definition order within a module."""
    return _collected(SUITE_DIR)


@functools.lru_cache(maxsize=4)
def _collected(suite_dir: Path) -> tuple[TestCase, ...]:
    """``collect()``, once per suite folder: every grading asks for it (the folders' glob took 0.5 ms)."""
    cases = [case for module_name in suite_modules() for case in _cases_in(module_name)]
    order = {exercise: index for index, exercise in enumerate(EXERCISE_IDS)}
    cases.sort(key=lambda case: order[case.exercise])  # stable: keeps definition order
    names = [case.name for case in cases]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"duplicate test names: {', '.join(duplicates)}")
    return tuple(cases)


def _lower_first(text: str) -> str:
    """'At position 0 ...' -> 'at position 0 ...', leaving 'RoPE ...' and 'T = 1 ...' alone."""
    return text[:1].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_STUDENT_MESSAGE else text[: MAX_STUDENT_MESSAGE - 3] + "..."


def _failure_output(case: TestCase, error: BaseException) -> str:
    if isinstance(error, NotImplementedBySubmission):
        return f"{error.name} {NOT_IMPLEMENTED}, so this test could not run ({case.statement})."
    if isinstance(error, SubmissionCrashed):
        return f"Your submission stopped while checking that {_lower_first(case.statement)}: {error.reason}"
    if isinstance(error, CannotCheck):  # the grader's finding, worded by the judge
        return f"The grader could not check that {_lower_first(case.statement)}: {error.reason}."
    if isinstance(error, StudentError):
        return (
            f"While checking that {_lower_first(case.statement)}, your code raised "
            f"{error.kind}: {_shorten(error.message)}"
        )
    if isinstance(error, AssertionError):
        return str(error) or f"Failed: {case.statement}."
    # Our own check broke on an output of an unexpected shape or type; the exception's text may
    # name hidden inputs, so only its type is shown.
    return (
        f"Your result could not be checked ({case.statement}): it does not have the shape, "
        f"type or dtype the spec asks for [{type(error).__name__}]."
    )


def _with_notes(output: str, notes: tuple[str, ...]) -> str:
    """The failure's sentence plus what the grader worked around, each note once (not when the
    failure already says it, as the type test's does)."""
    extra = [note for note in notes if note.split(";")[0] not in output]
    return output if not extra else output + " (Note: " + "; ".join(extra) + ".)"


def run_case(case: TestCase, student: Student) -> TestOutcome:
    """Run one test; every way a submission can fail becomes a failed outcome, never an exception."""
    student.begin_case()
    try:
        case.func(student)
    except Exception as error:  # noqa: BLE001 -- whatever happened, the student gets a sentence
        return TestOutcome(
            case.name,
            case.exercise,
            0.0,
            case.points,
            TestStatus.FAILED,
            _with_notes(_failure_output(case, error), student.case_notes()),
            case.visibility,
            case.family,
        )
    return TestOutcome(
        case.name,
        case.exercise,
        case.points,
        case.points,
        TestStatus.PASSED,
        f"Passed: {case.statement}.",
        case.visibility,
        case.family,
    )


def run_suite(student: Student, exercises: Iterable[str] | None = None) -> list[TestOutcome]:
    """Run every test (of the given exercises only, if any) against one submission."""
    wanted = set(EXERCISE_IDS if exercises is None else exercises)
    return [run_case(case, student) for case in collect() if case.exercise in wanted]


def prepare() -> int:
    """Import every test and draw every test's inputs now (about a second, once per process), so
    that the first submission a judge grades does not wait for it; returns how many tests drew."""
    drawing = [case.func.prepare for case in collect() if hasattr(case.func, "prepare")]
    for draw in drawing:
        draw()
    for exercise in EXERCISE_IDS:
        planned_calls(exercise)
    return len(drawing)


def suite_hash() -> str:
    """The suite's fingerprint (``grader.suite_files.suite_hash``) over ``SUITE_DIR``."""
    return suite_files.suite_hash(SUITE_DIR)
