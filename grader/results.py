"""What grading produces, as plain dataclasses that round-trip through JSON.

``SubmissionResult`` is what ``grader.api`` returns and the app stores; ``to_gradescope()`` gives
Gradescope's ``results.json`` (score, execution_time, tests[] with name, score, max_score,
status, output, visibility, tags) and ``from_gradescope()`` reads one back (the CLI does, to skip
a submission whose content and suite are unchanged). The gradebook row lives here too.

Statuses, visibilities and isolations are ``grader.vocabulary``'s members; a result built or read
with their plain strings (old stored JSON included) holds the members.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from grader.vocabulary import ExerciseStatus, Isolation, SubmissionStatus, Visibility, family_words
from poslab.exercises import EXERCISE_IDS
from poslab.vocabulary import TestStatus

# name, lms_id and late say who an LMS download's submission is (empty and false for files and folders).
GRADEBOOK_HEADER = ("id", "name", "lms_id", "late", "status", *EXERCISE_IDS, "total", "max")


@dataclass(frozen=True)
class TestOutcome:
    """One hidden (or public) test's result for one submission: what ``grader.suite.run_case``
    returns, the app shows and the store keeps."""

    __test__ = False  # not a pytest class

    name: str
    exercise: str
    score: float
    max_score: float
    status: TestStatus  # it ran and passed or failed, or it did not run because its file did not import
    output: str  # a sentence for the student
    visibility: Visibility
    family: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", TestStatus(self.status))
        object.__setattr__(self, "visibility", Visibility(self.visibility))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TestOutcome:
        return cls(**data)


@dataclass(frozen=True)
class ExerciseScore:
    score: float
    max_score: float


@dataclass(frozen=True)
class FamilyLoss:
    """Hidden tests of one property family that failed: how many, and the points they cost."""

    family: str
    failed: int
    points: float

    def sentence(self) -> str:
        return f"{self.failed} about {family_words(self.family)} failed, {self.points:g} point{'' if self.points == 1 else 's'}"


@dataclass(frozen=True)
class ExerciseFeedback:
    """What a student may see of one exercise, every lost point accounted for.

    ``status`` is ``GRADED``, ``DID_NOT_IMPORT`` (then ``import_messages`` is the one message to
    show, and nothing else) or ``NOT_GRADED`` (no tests ran for it). ``visible``: the visible tests'
    outcomes, messages whole. ``hidden_losses``: per property family, the count of hidden tests that
    failed and their points, never their names, inputs or messages. The points lost by the visible
    failures plus those of ``hidden_losses`` are exactly ``max_score - score``.
    """

    exercise: str
    status: ExerciseStatus
    score: float
    max_score: float
    import_messages: tuple[str, ...]
    visible: tuple[TestOutcome, ...]
    hidden_losses: tuple[FamilyLoss, ...]
    hidden_passed: int
    hidden_total: int

    def hidden_summary(self) -> str:
        """'hidden tests: 2 about values failed, 4 points; ...', or '' when none failed."""
        if not self.hidden_losses:
            return ""
        return "hidden tests: " + "; ".join(loss.sentence() for loss in self.hidden_losses)


@dataclass(frozen=True)
class SubmissionResult:
    submission_id: str
    status: SubmissionStatus
    tests: tuple[TestOutcome, ...]
    isolation: Isolation
    public_tests_only: bool  # True: the bundle's public tests ran, not the hidden suite
    submission_hash: str
    suite_hash: str
    grader_version: str
    execution_time: float
    messages: tuple[str, ...] = field(default=())  # import problems, in sentences

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", SubmissionStatus(self.status))
        object.__setattr__(self, "isolation", Isolation(self.isolation))

    @property
    def exercises(self) -> dict[str, ExerciseScore]:
        """Score and maximum per exercise id, every exercise present (0/0 if it has no tests)."""
        totals = {exercise: [0.0, 0.0] for exercise in EXERCISE_IDS}
        for test in self.tests:
            entry = totals.setdefault(test.exercise, [0.0, 0.0])
            entry[0] += test.score
            entry[1] += test.max_score
        return {exercise: ExerciseScore(score, top) for exercise, (score, top) in totals.items()}

    def exercise_status(self, exercise: str) -> ExerciseStatus:
        """Graded, did not import (its file did not import: nothing of it ran) or not graded."""
        tests = [test for test in self.tests if test.exercise == exercise]
        if not tests:
            return ExerciseStatus.NOT_GRADED
        if all(test.status == TestStatus.DID_NOT_IMPORT for test in tests):
            return ExerciseStatus.DID_NOT_IMPORT
        return ExerciseStatus.GRADED

    def feedback(self, exercise: str) -> ExerciseFeedback:
        """One exercise as the student sees it: see ``ExerciseFeedback``."""
        tests = [test for test in self.tests if test.exercise == exercise]
        status = self.exercise_status(exercise)
        hidden = [test for test in tests if test.visibility != Visibility.VISIBLE]
        losses: dict[str, list[float]] = {}
        for test in hidden:
            if test.score < test.max_score:
                entry = losses.setdefault(test.family, [0, 0.0])
                entry[0] += 1
                entry[1] += test.max_score - test.score
        return ExerciseFeedback(
            exercise,
            status,
            sum(test.score for test in tests),
            sum(test.max_score for test in tests),
            self.messages if status == ExerciseStatus.DID_NOT_IMPORT else (),
            tuple(test for test in tests if test.visibility == Visibility.VISIBLE),
            ()
            if status == ExerciseStatus.DID_NOT_IMPORT
            else tuple(FamilyLoss(family, int(n), points) for family, (n, points) in losses.items()),
            sum(test.status == TestStatus.PASSED for test in hidden),
            len(hidden),
        )

    @property
    def score(self) -> float:
        return sum(test.score for test in self.tests)

    @property
    def max_score(self) -> float:
        return sum(test.max_score for test in self.tests)

    # -- JSON

    def to_dict(self) -> dict:
        data = asdict(self)
        data["tests"] = [test.to_dict() for test in self.tests]
        data["messages"] = list(self.messages)
        # Derived, for readers of the JSON (from_dict recomputes them from the tests).
        data["exercises"] = {exercise: asdict(score) for exercise, score in self.exercises.items()}
        data["exercise_status"] = {exercise: self.exercise_status(exercise) for exercise in self.exercises}
        data["hidden_losses"] = {
            exercise: [asdict(loss) for loss in self.feedback(exercise).hidden_losses] for exercise in self.exercises
        }
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> SubmissionResult:
        fields = dict(data)
        for derived in ("exercises", "exercise_status", "hidden_losses"):
            fields.pop(derived, None)
        fields["tests"] = tuple(TestOutcome.from_dict(test) for test in fields["tests"])
        fields["messages"] = tuple(fields.get("messages", ()))
        return cls(**fields)

    @classmethod
    def from_json(cls, text: str) -> SubmissionResult:
        return cls.from_dict(json.loads(text))

    # -- Gradescope

    def to_gradescope(self) -> dict:
        # Gradescope knows passed and failed only; extra_data.statuses keeps DID_NOT_IMPORT.
        tests = [
            {
                "name": test.name,
                "score": test.score,
                "max_score": test.max_score,
                "status": TestStatus.PASSED if test.status == TestStatus.PASSED else TestStatus.FAILED,
                "output": test.output,
                "visibility": test.visibility,
                "tags": [test.exercise],
            }
            for test in self.tests
        ]
        data = {
            "score": self.score,
            "execution_time": round(self.execution_time, 3),
            "tests": tests,
            "extra_data": {
                "submission_id": self.submission_id,
                "status": self.status,
                "grader_version": self.grader_version,
                "suite_hash": self.suite_hash,
                "submission_hash": self.submission_hash,
                "isolation": self.isolation,
                "public_tests_only": self.public_tests_only,
                "messages": list(self.messages),
                "families": [test.family for test in self.tests],
                "statuses": [test.status for test in self.tests],
            },
        }
        lines = list(self.messages) + self.accounting_lines()
        if lines:
            data["output"] = "\n".join(lines)
        return data

    def accounting_lines(self) -> list[str]:
        """Per exercise with lost hidden points: 'rope: hidden tests: 1 about values failed, 4 points.'"""
        lines = []
        for exercise in self.exercises:
            summary = self.feedback(exercise).hidden_summary()
            if summary:
                lines.append(f"{exercise}: {summary}.")
        return lines

    @classmethod
    def from_gradescope(cls, data: dict) -> SubmissionResult:
        extra = data["extra_data"]
        families = extra.get("families") or [""] * len(data["tests"])
        statuses = extra.get("statuses") or [test["status"] for test in data["tests"]]
        tests = tuple(
            TestOutcome(
                test["name"],
                test["tags"][0],
                float(test["score"]),
                float(test["max_score"]),
                status,
                test["output"],
                test["visibility"],
                family,
            )
            for test, family, status in zip(data["tests"], families, statuses)
        )
        return cls(
            extra["submission_id"],
            extra["status"],
            tests,
            extra["isolation"],
            extra["public_tests_only"],
            extra["submission_hash"],
            extra["suite_hash"],
            extra["grader_version"],
            float(data["execution_time"]),
            tuple(extra.get("messages", ())),
        )

    def gradebook_row(self, name: str = "", lms_id: str = "", late: bool = False) -> list[str]:
        scores = self.exercises
        return [
            self.submission_id,
            name,
            lms_id,
            "true" if late else "false",
            self.status,
            *(f"{scores[e].score:g}" for e in EXERCISE_IDS),
            f"{self.score:g}",
            f"{self.max_score:g}",
        ]
