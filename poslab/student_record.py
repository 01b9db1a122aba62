"""One student's record as the Instructor page opens it: their attempts in time order, each with
the changes to its code since their previous attempt at the same exercise, and the submissions a
regrade replaced beside their regrades. Pure."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from poslab.store import Attempt
from poslab.vocabulary import AttemptKind


@dataclass(frozen=True)
class AttemptChange:
    attempt: Attempt
    number: int  # 1 for the student's first attempt at this exercise; a regrade has its original's
    diff: str  # a unified diff from the previous attempt's code ("" for the first, or no change)
    changed_lines: int  # lines added plus lines removed


def code_diff(before: str | None, after: str | None, before_label: str, after_label: str) -> tuple[str, int]:
    """A unified diff of two versions of a file, and how many lines it adds and removes."""
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            before_label,
            after_label,
            n=2,
        )
    )
    changed = sum(1 for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text, changed


def attempt_changes(attempts: Iterable[Attempt]) -> list[AttemptChange]:
    """Each attempt (oldest first) with the diff from the same exercise's attempt before it."""
    last: dict[str, Attempt] = {}
    counted: dict[str, int] = {}
    changes = []
    numbers: dict[int, int] = {}  # attempt id -> its number
    for attempt in sorted(attempts, key=lambda item: (item.time, item.id)):
        if attempt.regrade_of in numbers:  # the same code graded again: no new attempt
            numbers[attempt.id] = numbers[attempt.regrade_of]
            changes.append(AttemptChange(attempt, numbers[attempt.id], "", 0))
            continue
        previous = last.get(attempt.exercise)
        counted[attempt.exercise] = counted.get(attempt.exercise, 0) + 1
        numbers[attempt.id] = counted[attempt.exercise]
        number = counted[attempt.exercise]
        if previous is None:
            diff, changed = "", 0
        else:
            diff, changed = code_diff(previous.code, attempt.code, f"attempt {number - 1}", f"attempt {number}")
        changes.append(AttemptChange(attempt, number, diff, changed))
        last[attempt.exercise] = attempt
    return changes


def attempts_table(changes: Iterable[AttemptChange]) -> pd.DataFrame:
    """One row per attempt, newest first: what the drill-down lists before one is opened."""
    rows = [
        {
            "id": change.attempt.id,
            "exercise": change.attempt.exercise,
            "attempt": change.number,
            "time": change.attempt.time,
            "score": change.attempt.score,
            "max": change.attempt.max_score,
            "judged by": "public tests" if change.attempt.public_tests_only else "hidden suite",
            "regrade": regrade_note(change.attempt),
            "lines changed": change.changed_lines if change.number > 1 else None,
        }
        for change in changes
    ]
    table = pd.DataFrame(
        rows, columns=["id", "exercise", "attempt", "time", "score", "max", "judged by", "regrade", "lines changed"]
    )
    table["time"] = pd.to_datetime(table["time"], utc=True)
    return table.iloc[::-1].reset_index(drop=True)


def regrade_note(attempt: Attempt) -> str:
    """What a regrade changed about this attempt, in words ("" for an attempt no regrade touched)."""
    if attempt.kind == AttemptKind.SUPERSEDED:
        return "replaced by a regrade (score kept as history)"
    return "regrade" if attempt.regrade_of is not None else ""


def tests_table(details: object) -> pd.DataFrame:
    """Every test of an attempt as the grader kept it (hidden ones named: this is for instructors)."""
    tests = details.get("tests") if isinstance(details, dict) else None
    rows = [
        {
            "test": str(test.get("name", "")),
            "family": str(test.get("family") or ""),
            "status": str(test.get("status", "")),
            "points": f"{test.get('score', 0):g} / {test.get('max_score', 0):g}",
            "visibility": str(test.get("visibility", "")),
            "message": str(test.get("output", "")),
        }
        for test in tests or ()
        if isinstance(test, dict)
    ]
    return pd.DataFrame(rows, columns=["test", "family", "status", "points", "visibility", "message"])
