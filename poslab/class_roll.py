"""The whole class as the Instructor page lists it: every student on the roster (or, with no
roster, every student seen), by name, section and key, each exercise's points and the total.

Pure: it takes ``Store.class_progress()`` (activity, grades as best hidden-suite fractions), the
roster's members and each exercise's maximum. A student with nothing gets zeros; a student seen
but not on the roster is flagged. Statuses (``Status``) say where a student stands, in the whole
course or in one exercise; "late" is given by ``poslab.course_grades.assignment_roll`` for an
assignment with a due date, where some attempt came after the student's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

import pandas as pd

from poslab.grade_totals import POINT_DECIMALS, class_totals

Status = Literal["not started", "in progress", "done", "late"]
STATUSES: tuple[Status, ...] = ("not started", "in progress", "done", "late")
STATUS_MEANING = {
    "not started": "no activity at all (in one exercise: no hidden-suite grade yet)",
    "in progress": "some activity, not every exercise at full marks (in one exercise: graded, below full marks)",
    "done": "full marks in every exercise (in one exercise: full marks)",
    "late": "handed in after the due date (with an assignments file: the chosen assignment's)",
}
ROSTER_FLAG = "not on the roster"
IDENTITY_COLUMNS = ("name", "section", "key", "roster", "status")
ACTIVITY_COLUMNS = ("percent", "lessons_done", "exercises_graded", "last_active", "overridden")
FULL_MARKS = 1.0 - 1e-9  # a best fraction this close to 1 is full marks


class Member(Protocol):
    key: str
    name: str
    section: str


def exercise_status(fraction: float) -> Status:
    """Where a student stands in one exercise, from their best hidden-suite fraction (NaN: none)."""
    if pd.isna(fraction):
        return "not started"
    return "done" if fraction >= FULL_MARKS else "in progress"


def _course_status(active: bool, fractions: Sequence[float]) -> Status:
    if not active:
        return "not started"
    return "done" if fractions and all(exercise_status(value) == "done" for value in fractions) else "in progress"


def class_roll(progress: pd.DataFrame, roster: Sequence[Member], maxima: Mapping[str, float]) -> pd.DataFrame:
    """One row per student: ``IDENTITY_COLUMNS``, one column of points per exercise, ``total``,
    ``max``, then ``ACTIVITY_COLUMNS``. Roster students first (by name), then the others seen."""
    seen = progress.set_index("student") if not progress.empty else pd.DataFrame()
    people = [(member.key, member.name, member.section, True) for member in roster]
    rostered = {member.key for member in roster}
    people += [(key, key, "", not roster) for key in sorted(seen.index) if key not in rostered]
    rows = []
    for key, name, section, on_roster in people:
        found = seen.loc[key] if key in seen.index else None
        fractions = [float(found[f"grade:{ex}"]) if found is not None else float("nan") for ex in maxima]
        row = {
            "name": name,
            "section": section,
            "key": key,
            "roster": "" if on_roster else ROSTER_FLAG,
            "status": _course_status(found is not None, fractions),
        }
        for (exercise, maximum), fraction in zip(maxima.items(), fractions):
            row[exercise] = 0.0 if pd.isna(fraction) else round(fraction * maximum, POINT_DECIMALS)
            row[f"grade:{exercise}"] = fraction
        for column in ACTIVITY_COLUMNS:
            row[column] = found.get(column) if found is not None else None  # "overridden": newer than some tables
        rows.append(row)
    table = pd.DataFrame(
        rows, columns=[*IDENTITY_COLUMNS, *maxima, *(f"grade:{ex}" for ex in maxima), *ACTIVITY_COLUMNS]
    )
    total, most = class_totals(table, maxima)
    table.insert(len(IDENTITY_COLUMNS) + len(maxima), "total", total)
    table.insert(len(IDENTITY_COLUMNS) + len(maxima) + 1, "max", most)
    table["percent"] = pd.to_numeric(table["percent"]).fillna(0.0).round(1)
    for column in ("lessons_done", "exercises_graded"):
        table[column] = pd.to_numeric(table[column]).fillna(0).astype(int)
    table["last_active"] = pd.to_datetime(table["last_active"], utc=True)
    table["overridden"] = table["overridden"].fillna("")  # the exercises whose score was set by hand
    return table


def filtered(
    table: pd.DataFrame,
    section: str | None = None,
    exercise: str | None = None,
    status: Status | None = None,
    sort_by: str = "name",
) -> pd.DataFrame:
    """The rows of one section (None: all) whose status, in ``exercise`` if given else in the
    course, is ``status`` (None: any), sorted by ``sort_by`` (a column; points and totals highest first)."""
    rows = table if section is None else table[table["section"] == section]
    if status is not None:
        statuses = rows[f"grade:{exercise}"].map(exercise_status) if exercise else rows["status"]
        rows = rows[statuses == status]
    descending = sort_by in ("total", "percent", "last_active") or f"grade:{sort_by}" in table.columns
    keys = [sort_by, "name", "key"] if sort_by not in ("name", "key") else [sort_by, "key"]
    order = [not descending] + [True] * (len(keys) - 1)
    return rows.sort_values(keys, ascending=order, kind="stable", na_position="last", ignore_index=True)


def roll_csv(table: pd.DataFrame) -> str:
    """The CSV: one row per student, the columns the page shows (no internal ``grade:`` fractions)."""
    shown = [column for column in table.columns if not column.startswith("grade:")]
    return table[shown].to_csv(index=False)
