"""Grade every generated mutant with the hidden suite and score the suite per exercise.

The reference and the mutants are graded as submissions, sandboxed, ``jobs`` at a time, by the
CLI's own parallel grading (one warm ``grader.api.Grader`` per thread); each mutant only on the
exercises its code reaches. A mutant is *killed* in an exercise when that exercise loses points,
and *survives* when it keeps full marks. The score of an exercise is killed / (mutants - recorded
equivalents). A recorded equivalent is checked, not trusted: its answers to the exercise's tests
must be the reference's (``recording.differences``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from grader.api import Grader, load_submission
from grader.mutants import reference_source
from grader.mutation.equivalents import Equivalent, claim_for
from grader.mutation.generate import GeneratedMutant, default_operators, generate
from grader.mutation.recording import Log, RecordingSuite, changed_tests, differences
from grader.results import SubmissionResult
from grader.settings import GraderSettings
from poslab.vocabulary import TestStatus

TARGET = 0.95
REFERENCE_ID = "reference"


@dataclass(frozen=True)
class Verdict:
    """One mutant in one exercise."""

    mutant: GeneratedMutant
    exercise: str
    killed: bool
    claim: Equivalent | None = None
    differences: tuple[str, ...] = ()  # a claimed equivalent's answers that differ from the reference's

    def to_dict(self) -> dict:
        return {
            "id": self.mutant.ident,
            "exercise": self.exercise,
            "operator": self.mutant.operator,
            "line": self.mutant.line,
            "function": self.mutant.function,
            "original": self.mutant.original,
            "mutated": self.mutant.mutated,
            "killed": self.killed,
            "equivalent_reason": self.claim.reason if self.claim else None,
            "differences": list(self.differences),
        }


@dataclass(frozen=True)
class ExerciseScore:
    exercise: str
    killed: int
    non_equivalent: int
    equivalent: int

    @property
    def fraction(self) -> float:
        return self.killed / self.non_equivalent if self.non_equivalent else 1.0

    def line(self) -> str:
        return (
            f"{self.exercise}: {100 * self.fraction:.1f}% ({self.killed} killed / {self.non_equivalent} "
            f"non-equivalent, {self.equivalent} equivalent)"
        )


@dataclass(frozen=True)
class KindScore:
    """The mutants that touched a kind of promise: killed ones by the kinds of the tests they failed,
    survivors by the kinds of the tests that saw an answer of theirs differ from the reference's."""

    kind: str
    killed: int
    touched: int

    @property
    def fraction(self) -> float:
        return self.killed / self.touched if self.touched else 1.0

    def line(self) -> str:
        return f"{self.kind}: {100 * self.fraction:.1f}% ({self.killed} killed / {self.touched} that touched it)"


@dataclass
class MutationReport:
    scores: list[ExerciseScore]
    survivors: list[Verdict]
    false_equivalents: list[Verdict]  # recorded as equivalent, but they answer differently
    stale: list[str]  # recorded equivalents that match no surviving mutant
    reference_problem: str | None
    operators: tuple[str, ...]
    seconds: float
    mutants: int
    verdicts: list[Verdict] = field(default_factory=list)
    kinds: list[KindScore] = field(default_factory=list)

    def passed(self, target: float = TARGET) -> bool:
        return (
            self.reference_problem is None
            and not self.false_equivalents
            and not self.stale
            and all(score.fraction >= target for score in (*self.scores, *self.kinds))
        )

    def to_dict(self) -> dict:
        return {
            "scores": [asdict(score) | {"percent": round(100 * score.fraction, 1)} for score in self.scores],
            "kinds": [asdict(score) | {"percent": round(100 * score.fraction, 1)} for score in self.kinds],
            "survivors": [v.to_dict() for v in self.survivors],
            "false_equivalents": [v.to_dict() for v in self.false_equivalents],
            "stale_equivalents": self.stale,
            "reference_problem": self.reference_problem,
            "operators": list(self.operators),
            "mutants": self.mutants,
            "seconds": round(self.seconds, 1),
            "target_percent": 100 * TARGET,
            "passed": self.passed(),
        }


class _ExerciseGrader:
    """A Grader that grades each submission on its own exercises and keeps the wanted answer logs."""

    def __init__(
        self,
        settings: GraderSettings,
        suite: RecordingSuite,
        exercises_of: dict[str, tuple[str, ...]],
        logs: dict[str, Log],
        lock: threading.Lock,
    ) -> None:
        self.settings, self.suite, self.exercises_of, self.logs, self.lock = settings, suite, exercises_of, logs, lock
        self.grader: Grader | None = None

    def __enter__(self) -> _ExerciseGrader:
        self.grader = Grader(self.settings, suite=self.suite)
        return self

    def __exit__(self, *exc_info) -> None:
        self.grader.close()

    def grade(self, submission) -> SubmissionResult:
        self.suite.take_log()
        result = self.grader.grade(submission, exercises=self.exercises_of[submission.submission_id])
        log = self.suite.take_log()
        if submission.submission_id in self.logs:
            with self.lock:
                self.logs[submission.submission_id] = log
        return result


def _lost(result: SubmissionResult, exercise: str) -> bool:
    score = result.exercises.get(exercise)
    return score is None or score.score < score.max_score


def grade_mutants(
    settings: GraderSettings,
    jobs: int,
    exercises: Sequence[str],
    claims: Sequence[Equivalent],
    operators: tuple[str, ...] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> MutationReport:
    from grader.cli.grading import grade_in_parallel  # the CLI's parallel grading, one Grader per thread

    started = time.monotonic()
    operators = operators or default_operators()
    reference = reference_source()
    mutants = list(generate(reference, operators, tuple(exercises)))
    exercises_of = {REFERENCE_ID: tuple(exercises)}
    exercises_of.update({m.ident: tuple(e for e in m.exercises if e in exercises) for m in mutants})
    claimed = {(m.ident, e): c for m in mutants for e in exercises_of[m.ident] if (c := claim_for(claims, m.key, e))}
    members = _accepted_members(claims, exercises)
    exercises_of.update({ident: (variant.exercise,) for ident, variant in members.items()})
    # Every mutant's answers: a survivor's kinds of promise are those of the tests that saw them differ.
    logs: dict[str, Log] = {ident: {} for ident in [REFERENCE_ID, *members, *(m.ident for m in mutants)]}
    items = [load_submission({"reference.py": reference}, REFERENCE_ID, settings)]
    items += [load_submission({f"{ident}.py": variant.source}, ident, settings) for ident, variant in members.items()]
    items += [load_submission({f"{m.ident}.py": m.source}, m.ident, settings) for m in mutants]
    suite, lock, results = RecordingSuite(), threading.Lock(), {}

    def keep(result: SubmissionResult) -> None:
        with lock:
            results[result.submission_id] = result
        if on_step:
            on_step(result.submission_id)

    grade_in_parallel(items, jobs, lambda: _ExerciseGrader(settings, suite, exercises_of, logs, lock), keep)
    tests_of = {e: {case.name for case in suite.collect() if case.exercise == e} for e in exercises}
    verdicts = []
    by_name = {variant.name: ident for ident, variant in members.items()}
    for mutant in mutants:
        for exercise in exercises_of[mutant.ident]:
            claim = claimed.get((mutant.ident, exercise))
            killed = _lost(results[mutant.ident], exercise)
            found = ()
            if claim:
                accepted = tuple(logs[by_name[name]] for name in claim.same_as if name in by_name)
                compared = tests_of[exercise] - set(claim.free)
                found = tuple(differences(logs[REFERENCE_ID], logs[mutant.ident], compared, accepted))
                found += tuple(
                    f"free names no test of {exercise}: {name}" for name in claim.free if name not in tests_of[exercise]
                )
                found += tuple(
                    f"same_as names no member of the family: {name}" for name in claim.same_as if name not in by_name
                )
            verdicts.append(Verdict(mutant, exercise, killed, claim, found))
    problems = [ident for ident in members if _lost(results[ident], exercises_of[ident][0])]
    report = _report(
        verdicts, claims, exercises, results[REFERENCE_ID], operators, time.monotonic() - started, len(mutants)
    )
    report.stale += [f"the family member {members[ident].name} (named in same_as) loses points" for ident in problems]
    report.kinds = _kind_scores(verdicts, results, logs, tests_of)
    return report


def _kind_scores(verdicts: list[Verdict], results: dict, logs: dict[str, Log], tests_of: dict) -> list[KindScore]:
    from grader.suite.promises import promises

    kinds_of_test: dict[str, set[str]] = {}  # a test may check promises of several kinds (rows)
    for exercise in tests_of:
        for promise in promises(exercise):
            for label in promise.tests:
                kinds_of_test.setdefault(f"{exercise}: {label}", set()).add(promise.kind)
    killed: dict[str, int] = {}
    touched: dict[str, int] = {}
    for verdict in verdicts:
        if verdict.claim is not None and not verdict.killed:
            continue  # a recorded equivalent, checked above
        if verdict.killed:
            seen = {test.name for test in results[verdict.mutant.ident].tests if test.status != TestStatus.PASSED}
        else:
            seen = changed_tests(logs[REFERENCE_ID], logs[verdict.mutant.ident], tests_of[verdict.exercise])
        for kind in set().union(*(kinds_of_test.get(name, set()) for name in seen)):
            touched[kind] = touched.get(kind, 0) + 1
            killed[kind] = killed.get(kind, 0) + verdict.killed
    return [KindScore(kind, killed[kind], touched[kind]) for kind in sorted(touched)]


def _accepted_members(claims: Sequence[Equivalent], exercises: Sequence[str]) -> dict:
    """The family members that recorded equivalents name in ``same_as``, by submission id."""
    from grader.variants import family

    names = {name for claim in claims if set(claim.exercises) & set(exercises) for name in claim.same_as}
    chosen = [variant for variant in family() if variant.name in names]
    return {f"family{index:03d}": variant for index, variant in enumerate(chosen)}


def _report(
    verdicts: list[Verdict],
    claims: Sequence[Equivalent],
    exercises: Sequence[str],
    reference: SubmissionResult,
    operators: tuple[str, ...],
    seconds: float,
    count: int,
) -> MutationReport:
    scores = []
    for exercise in exercises:
        mine = [v for v in verdicts if v.exercise == exercise]
        equivalent = [v for v in mine if v.claim is not None and not v.killed]
        killed = sum(v.killed for v in mine)
        scores.append(ExerciseScore(exercise, killed, len(mine) - len(equivalent), len(equivalent)))
    used = {(id(v.claim), v.exercise) for v in verdicts if v.claim is not None and not v.killed}
    stale = [
        f"{claim.describe()} [{exercise}]: "
        + (
            "its mutant loses points"
            if any(v.claim is claim and v.exercise == exercise for v in verdicts)
            else "no such mutant any more"
        )
        for claim in claims
        for exercise in claim.exercises
        if exercise in exercises and (id(claim), exercise) not in used
    ]
    lost = [e for e in exercises if _lost(reference, e)]
    problem = f"the reference loses points in {', '.join(lost)}" if lost else None
    return MutationReport(
        scores,
        [v for v in verdicts if not v.killed and v.claim is None],
        [v for v in verdicts if v.claim is not None and not v.killed and v.differences],
        stale,
        problem,
        operators,
        seconds,
        count,
        verdicts,
    )
