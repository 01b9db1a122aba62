"""Each exercise's promise table (``grader/suite/<id>/clauses.md``), read: the spec's clauses, what kind of
promise each makes, the tests that check it and the mutants that break it alone.

    | clause | kind | tests | mutants |

``tests/test_spec_table.py`` checks the tables against the specs, the suite and the mutants;
``python -m grader validate`` reports its catalogue's mutants by kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.suite import exercise_dir
from grader.vocabulary import PromiseKind
from poslab.exercises import EXERCISE_IDS

TABLE = "clauses.md"


@dataclass(frozen=True)
class Promise:
    """A row: the spec's words it quotes, their kind, the tests that check them (labels, as in the gradebook;
    "none" when no test does) and, for every kind but a value, the mutants that break this promise alone."""

    exercise: str
    fragments: tuple[str, ...]
    kind: PromiseKind
    tests: frozenset[str]
    mutants: tuple[str, ...]


def promises(exercise: str) -> list[Promise]:
    rows = []
    for line in (exercise_dir(exercise) / TABLE).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")] if line.startswith("| ") else []
        if not cells or cells[0] in ("clause", "---"):
            continue
        if len(cells) != 4:
            raise ValueError(
                f"{exercise}'s {TABLE}: a row without its four cells (clause, kind, tests, mutants): {line}"
            )
        names = re.sub(r"\([^)]*\)", "", cells[2])  # notes in parentheses may hold commas
        tests = frozenset(label.strip() for label in names.split(",") if label.strip())
        mutants = tuple(name.strip() for name in cells[3].split(",") if name.strip() not in ("", "-"))
        rows.append(Promise(exercise, tuple(re.findall(r"`([^`]+)`", cells[0])), PromiseKind(cells[1]), tests, mutants))
    return rows


def all_promises() -> list[Promise]:
    return [promise for exercise in EXERCISE_IDS for promise in promises(exercise)]


def kind_of_mutant(name: str, table: list[Promise]) -> PromiseKind:
    """The kind of the promise a catalogue mutant breaks: its row's, or a value's when no row names it."""
    return next((promise.kind for promise in table if name in promise.mutants), PromiseKind.VALUE)
