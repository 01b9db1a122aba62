"""What grading produces, as plain dataclasses that round-trip through JSON.

``SubmissionResult`` is what ``grader.api`` returns and the app stores; ``to_gradescope()`` gives
Gradescope's ``results.json`` (score, execution_time, tests[] with name, score, max_score,
status, output, visibility, tags) and ``from_gradescope()`` reads one back (the CLI does, to skip
a submission whose content and suite are unchanged). The gradebook row lives here too.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from poslab.exercises import EXERCISE_IDS

STATUSES = ("graded", "import_failed")
GRADEBOOK_HEADER = ("id", "status", *EXERCISE_IDS, "total", "max")


@dataclass(frozen=True)
class TestOutcome:
    """One hidden (or public) test's result for one submission: what ``grader.suite.run_case``
    returns, the app shows and the store keeps."""

    __test__ = False  # not a pytest class

    name: str
    exercise: str
    score: float
    max_score: float
    status: str  # "passed" or "failed"
    output: str  # a sentence for the student
    visibility: str  # Gradescope's: visible, hidden, after_due_date, after_published
    family: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TestOutcome":
        return cls(**data)


@dataclass(frozen=True)
class ExerciseScore:
    score: float
    max_score: float


@dataclass(frozen=True)
class SubmissionResult:
    submission_id: str
    status: str  # "graded" or "import_failed"
    tests: tuple[TestOutcome, ...]
    isolation: str  # "bwrap" or "fallback"
    public_tests_only: bool  # True: the bundle's public tests ran, not the hidden suite
    submission_hash: str
    suite_hash: str
    grader_version: str
    execution_time: float
    messages: tuple[str, ...] = field(default=())  # import problems, in sentences

    @property
    def exercises(self) -> dict[str, ExerciseScore]:
        """Score and maximum per exercise id, every exercise present (0/0 if it has no tests)."""
        totals = {exercise: [0.0, 0.0] for exercise in EXERCISE_IDS}
        for test in self.tests:
            entry = totals.setdefault(test.exercise, [0.0, 0.0])
            entry[0] += test.score
            entry[1] += test.max_score
        return {exercise: ExerciseScore(score, top) for exercise, (score, top) in totals.items()}

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
        # Derived, for readers of the JSON (from_dict recomputes it from the tests).
        data["exercises"] = {exercise: asdict(score) for exercise, score in self.exercises.items()}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> "SubmissionResult":
        fields = dict(data)
        fields.pop("exercises", None)
        fields["tests"] = tuple(TestOutcome.from_dict(test) for test in fields["tests"])
        fields["messages"] = tuple(fields.get("messages", ()))
        return cls(**fields)

    @classmethod
    def from_json(cls, text: str) -> "SubmissionResult":
        return cls.from_dict(json.loads(text))

    # -- Gradescope

    def to_gradescope(self) -> dict:
        tests = [{"name": test.name, "score": test.score, "max_score": test.max_score, "status": test.status,
                  "output": test.output, "visibility": test.visibility, "tags": [test.exercise]}
                 for test in self.tests]
        data = {"score": self.score, "execution_time": round(self.execution_time, 3), "tests": tests,
                "extra_data": {
                    "submission_id": self.submission_id, "status": self.status,
                    "grader_version": self.grader_version, "suite_hash": self.suite_hash,
                    "submission_hash": self.submission_hash, "isolation": self.isolation,
                    "public_tests_only": self.public_tests_only, "messages": list(self.messages),
                    "families": [test.family for test in self.tests]}}
        if self.messages:
            data["output"] = "\n".join(self.messages)
        return data

    @classmethod
    def from_gradescope(cls, data: dict) -> "SubmissionResult":
        extra = data["extra_data"]
        families = extra.get("families") or [""] * len(data["tests"])
        tests = tuple(TestOutcome(test["name"], test["tags"][0], float(test["score"]), float(test["max_score"]),
                                  test["status"], test["output"], test["visibility"], family)
                      for test, family in zip(data["tests"], families))
        return cls(extra["submission_id"], extra["status"], tests, extra["isolation"], extra["public_tests_only"],
                   extra["submission_hash"], extra["suite_hash"], extra["grader_version"],
                   float(data["execution_time"]), tuple(extra.get("messages", ())))

    def gradebook_row(self) -> list[str]:
        scores = self.exercises
        return [self.submission_id, self.status, *(f"{scores[e].score:g}" for e in EXERCISE_IDS),
                f"{self.score:g}", f"{self.max_score:g}"]
