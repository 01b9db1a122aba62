"""Regrade: the stored submissions graded again by today's hidden suite, after a fix to it.

Every current hidden-suite submission (or one student's, or one exercise's) is handed, as the
code that was kept, to a judge (``GradeAll``: the command line's ``grade_with_service``, the
app's grading service, or warm Graders on threads); each result is kept as a new attempt that
supersedes the original, which stays in the history with its score (``Store.record_regrade``).
The report says what changed: student, exercise, old and new score. Nothing is overwritten.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from grader.gradebook import per_test_rows
from grader.results import SubmissionResult
from grader.settings import GraderSettings
from grader.submissions import Submission, load_submission
from grader.vocabulary import SubmissionStatus
from poslab.exercises import get_exercise
from poslab.roles import Actor, require
from poslab.store import Attempt, AttemptToRecord
from poslab.vocabulary import AuditAction

# Grade every submission and hand each result to the callback (from any thread), as
# ``grader.cli.grade_with_service`` and ``grade_in_parallel`` do.
GradeAll = Callable[[Sequence[Submission], Callable[[SubmissionResult], None]], None]
SUBMISSION_PREFIX = "attempt-"


@dataclass(frozen=True)
class RegradeChange:
    student: str
    exercise: str
    attempt_id: int  # the original, kept with its score (superseded)
    regrade_id: int  # the regrade's attempt, which counts now
    old_score: float
    old_max: float
    new_score: float
    new_max: float

    @property
    def changed(self) -> bool:
        return (self.old_score, self.old_max) != (self.new_score, self.new_max)

    def line(self) -> str:
        return f"{self.student}  {self.exercise}  {self.old_score:g}/{self.old_max:g} -> {self.new_score:g}/{self.new_max:g}"


@dataclass(frozen=True)
class RegradeReport:
    regraded: tuple[RegradeChange, ...]  # every attempt graded again, changed or not
    not_regraded: tuple[str, ...] = ()  # sentences: attempts the judges could not grade, or regraded meanwhile

    @property
    def changes(self) -> tuple[RegradeChange, ...]:
        return tuple(item for item in self.regraded if item.changed)

    def summary(self) -> str:
        skipped = f"; {len(self.not_regraded)} not regraded" if self.not_regraded else ""
        return f"{len(self.regraded)} attempt(s) regraded, {len(self.changes)} changed{skipped}"

    def to_dict(self) -> dict[str, Any]:
        return {"regraded": [asdict(item) for item in self.regraded], "not_regraded": list(self.not_regraded)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegradeReport:
        return cls(tuple(RegradeChange(**item) for item in data["regraded"]), tuple(data["not_regraded"]))


def to_regrade(store: Any, student: str | None = None, exercise: str | None = None) -> tuple[Attempt, ...]:
    """The current hidden-suite submissions with their code (a regrade's replaces its original)."""
    found = store.attempt_details(student, exercise, public_tests_only=False)
    return tuple(item for item in found if item.code is not None)


def submission_of(attempt: Attempt, settings: GraderSettings | None = None) -> Submission:
    """The kept code as it was handed in: the exercise's own file."""
    files = {get_exercise(attempt.exercise).filename: attempt.code or ""}
    return load_submission(files, submission_id=f"{SUBMISSION_PREFIX}{attempt.id}", settings=settings)


def regrade(
    store: Any,
    grade_all: GradeAll,
    *,
    student: str | None = None,
    exercise: str | None = None,
    actor: Actor | str | None = None,
    settings: GraderSettings | None = None,
) -> RegradeReport:
    """Grade the stored submissions again (``to_regrade``) and keep each result as a regrade."""
    require(actor, AuditAction.REGRADE)
    attempts = {f"{SUBMISSION_PREFIX}{item.id}": item for item in to_regrade(store, student, exercise)}
    regraded: list[RegradeChange] = []
    missed: list[str] = []
    lock = threading.Lock()

    def keep(result: SubmissionResult) -> None:
        original = attempts[result.submission_id]
        score = result.exercises.get(original.exercise)
        if result.status == SubmissionStatus.STOPPED_GRADER or score is None or score.max_score <= 0:
            with lock:
                missed.append(
                    f"{original.student}'s attempt {original.id} ({original.exercise}): the judges gave no score"
                )
            return
        details = {**result.to_dict(), "regrade_of": original.id}
        details["tests"] = [test for test in details["tests"] if test["exercise"] == original.exercise]
        again = AttemptToRecord(
            original.exercise,
            score.score,
            score.max_score,
            details,
            original.code,
            False,
            per_test_rows(result, original.exercise),
        )
        new_id = store.record_regrade(original.id, again, actor=actor)
        with lock:
            if new_id is None:
                missed.append(f"{original.student}'s attempt {original.id}: another regrade replaced it first")
                return
            regraded.append(
                RegradeChange(
                    original.student,
                    original.exercise,
                    original.id,
                    new_id,
                    original.score,
                    original.max_score,
                    score.score,
                    score.max_score,
                )
            )

    submissions = [submission_of(item, settings) for item in attempts.values()]
    grade_all(submissions, keep)
    order = {key: index for index, key in enumerate(attempts)}
    regraded.sort(key=lambda item: order[f"{SUBMISSION_PREFIX}{item.attempt_id}"])
    report = RegradeReport(tuple(regraded), tuple(missed))
    scope = ", ".join(part for part in (student, exercise) if part) or "the whole class"
    store.log_action(AuditAction.REGRADE, scope, report.summary(), actor=actor)
    return report
