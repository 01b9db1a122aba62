"""The recorded equivalent mutants (``grader/suite/equivalent_mutants.toml``): claims to check.

Each entry names a mutation by where it is and what it changes (the enclosing definition, the
changed line before and after, stripped; ``mutated = "*"`` for every mutation of a line that no
exercise can run), the exercises it is claimed equivalent for, and a one-line reason. Optionally,
``same_as`` names members of the metamorphic family (``grader.variants``) for a mutant that turns
the reference into another accepted convention (the concatenated layout, float32 inside), and
``free`` names tests whose answers the spec leaves free for it (a module's starting values: the
test only asks that they be finite); the mutant must still pass those, and match everywhere else.
``python -m grader mutation`` grades every generated mutant; for one that matches an entry it
compares the answer to every call of that exercise's tests with the reference's (or, call by
call, with one of the named members') and fails when one differs. An entry that matches no
generated mutant, or whose mutant loses points, is stale and fails the command too.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from poslab.exercises import EXERCISE_IDS

EQUIVALENTS_FILE = Path(__file__).resolve().parent.parent / "suite" / "equivalent_mutants.toml"
FIELDS = ("function", "original", "mutated", "exercises", "reason")
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


def _entry(raw: dict, index: int) -> Equivalent:
    missing = [name for name in FIELDS if not raw.get(name)]
    unknown = sorted(set(raw) - set(FIELDS) - set(OPTIONAL))
    if missing or unknown:
        raise EquivalentsError(
            f"entry {index}: needs the fields {', '.join(FIELDS)} (and may have "
            f"{', '.join(OPTIONAL)}); missing: {', '.join(missing) or 'none'}; "
            f"unknown: {', '.join(unknown) or 'none'}"
        )
    exercises = tuple(raw["exercises"])
    unknown = [exercise for exercise in exercises if exercise not in EXERCISE_IDS]
    if unknown:
        raise EquivalentsError(f"entry {index}: unknown exercise(s) {', '.join(unknown)}")
    reason = " ".join(str(raw["reason"]).split())
    return Equivalent(
        str(raw["function"]),
        " ".join(raw["original"].split()),
        " ".join(raw["mutated"].split()),
        exercises,
        reason,
        tuple(raw.get("same_as", ())),
        tuple(raw.get("free", ())),
    )


def load_equivalents(path: Path = EQUIVALENTS_FILE) -> tuple[Equivalent, ...]:
    if not path.is_file():
        return ()
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = tuple(_entry(item, index) for index, item in enumerate(raw.get("equivalent", []), start=1))
    keys = [entry.key for entry in entries]
    duplicates = {key for key in keys if keys.count(key) > 1}
    if duplicates:
        raise EquivalentsError(f"recorded twice: {'; '.join(' -> '.join(key[1:]) for key in sorted(duplicates))}")
    return entries


def claim_for(claims, key: tuple[str, str, str], exercise: str) -> Equivalent | None:
    """The entry claiming the mutation ``key`` equivalent for ``exercise``: an exact one first."""
    found = [c for c in claims if exercise in c.exercises and c.matches(key)]
    return min(found, key=lambda c: c.mutated == ANY_MUTATION, default=None)


def toml_entry(function: str, original: str, mutated: str, exercises: tuple[str, ...], reason: str) -> str:
    """One entry in the file's format (for ``--json`` readers writing new entries)."""

    def quoted(text: str) -> str:
        return "'" + text + "'" if "'" not in text else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    return (
        f"[[equivalent]]\nfunction = {quoted(function)}\noriginal = {quoted(original)}\n"
        f"mutated = {quoted(mutated)}\nexercises = [{', '.join(quoted(e) for e in exercises)}]\n"
        f"reason = {quoted(reason)}\n"
    )
