"""The recorded equivalent mutants (``grader/suite/<id>/equivalents.toml``): claims to check.

Each entry names a mutation by where it is and what it changes (the enclosing definition, the
changed line before and after, stripped; ``mutated = "*"`` for every mutation of a line no exercise
runs) and a one-line reason; it is claimed for the exercise whose package holds the file.
``same_as`` names correct variants the mutant may match instead; ``free`` names tests whose answers
the spec leaves free for it. ``python -m grader mutation`` re-grades every claim and fails when an
answer differs, or when an entry matches no generated mutant (stale).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from poslab.exercises import EXERCISE_IDS

SUITE_DIR = Path(__file__).resolve().parent.parent / "suite"
EQUIVALENTS_NAME = "equivalents.toml"
FIELDS = ("function", "original", "mutated", "reason")
OPTIONAL = ("same_as", "free")
ANY_MUTATION = "*"


class EquivalentsError(ValueError):
    """The file is malformed (a missing field, an unknown exercise, a duplicate)."""


@dataclass(frozen=True)
class Equivalent:
    function: str
    original: str
    mutated: str
    exercises: tuple[str, ...]
    reason: str
    same_as: tuple[str, ...] = ()
    free: tuple[str, ...] = ()  # full test names ("learned: initial table is finite")

    @property
    def key(self) -> tuple[str, str, str]:
        return self.function, self.original, self.mutated

    def matches(self, key: tuple[str, str, str]) -> bool:
        return key[:2] == self.key[:2] and self.mutated in (key[2], ANY_MUTATION)

    def describe(self) -> str:
        return f"{self.function}: {self.original}  ->  {self.mutated}"


def _entry(raw: dict, index: int, exercise: str) -> Equivalent:
    missing = [name for name in FIELDS if not raw.get(name)]
    unknown = sorted(set(raw) - set(FIELDS) - set(OPTIONAL))
    if missing or unknown:
        raise EquivalentsError(
            f"entry {index}: needs the fields {', '.join(FIELDS)} (and may have "
            f"{', '.join(OPTIONAL)}); missing: {', '.join(missing) or 'none'}; "
            f"unknown: {', '.join(unknown) or 'none'}"
        )
    reason = " ".join(str(raw["reason"]).split())
    return Equivalent(
        str(raw["function"]),
        " ".join(raw["original"].split()),
        " ".join(raw["mutated"].split()),
        (exercise,),
        reason,
        tuple(raw.get("same_as", ())),
        tuple(raw.get("free", ())),
    )


def equivalents_file(exercise: str) -> Path:
    return SUITE_DIR / exercise / EQUIVALENTS_NAME


def load_file(path: Path, exercise: str) -> tuple[Equivalent, ...]:
    """One exercise's entries (none if it has no file); raises EquivalentsError naming the file."""
    if not path.is_file():
        return ()
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        entries = tuple(_entry(item, index, exercise) for index, item in enumerate(raw.get("equivalent", []), start=1))
    except EquivalentsError as error:
        raise EquivalentsError(f"{exercise}/{path.name}: {error}") from None
    keys = [entry.key for entry in entries]
    duplicates = {key for key in keys if keys.count(key) > 1}
    if duplicates:
        raise EquivalentsError(
            f"{path.name} of {exercise} records twice: {'; '.join(' -> '.join(key[1:]) for key in sorted(duplicates))}"
        )
    return entries


def load_equivalents() -> tuple[Equivalent, ...]:
    """Every exercise's recorded equivalents, in the catalogue's order."""
    return tuple(entry for exercise in EXERCISE_IDS for entry in load_file(equivalents_file(exercise), exercise))


def claim_for(claims, key: tuple[str, str, str], exercise: str) -> Equivalent | None:
    """The entry claiming the mutation ``key`` equivalent for ``exercise``: an exact one first."""
    found = [c for c in claims if exercise in c.exercises and c.matches(key)]
    return min(found, key=lambda c: c.mutated == ANY_MUTATION, default=None)
