"""The reference as one submission file, and buggy variants of it (mutants) to prove the suite.

``reference_source()`` concatenates the reference modules of ``poslab.encodings`` and drops
their imports of each other, so the correct submission is built from the reference, never copied.
Each mutant is a list of textual patches (old snippet -> new snippet) on that source; a patch
whose snippet is missing or ambiguous raises, so a change to the reference cannot silently turn a
mutant into a copy of the reference. An exercise's mutants live in ``grader/suite/<id>/mutants.py``
(``MUTANTS``), found from the catalogue (``poslab.exercises``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from dataclasses import dataclass
from functools import cache

from grader.mutants.spec import MutantSpec
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISES

ENCODINGS_DIR = PROJECT_ROOT / "poslab" / "encodings"
ENCODINGS_PACKAGE = "poslab.encodings"
ALLOWED_IMPORTS = ("torch", "math", "typing", "dataclasses", "collections", "__future__")


class PatchError(ValueError):
    """A mutant's patch no longer applies to the reference (the reference changed)."""


@dataclass(frozen=True)
class Mutant:
    name: str
    exercise: str
    description: str
    source: str  # a standalone, buggy, one-file submission
    slow: bool = False  # a deliberately slow submission (seconds per call), aimed at the speed tests


def _without_package_imports(source: str, filename: str) -> str:
    """``source`` minus ``from __future__`` and ``from poslab...`` imports (which may span lines)."""
    drop: set[int] = set()
    for node in ast.parse(source, filename).body:
        if isinstance(node, ast.ImportFrom) and (
            node.module == "__future__" or (node.module or "").startswith("poslab")
        ):
            drop.update(range(node.lineno, node.end_lineno + 1))
    lines = source.splitlines()
    return "\n".join(line for number, line in enumerate(lines, start=1) if number not in drop)


def _encodings_imported(filename: str) -> list[str]:
    """The modules of ``poslab.encodings`` that ``filename`` imports from, as file names."""
    tree = ast.parse((ENCODINGS_DIR / filename).read_text(encoding="utf-8"), filename)
    modules = [
        node.module.removeprefix(ENCODINGS_PACKAGE + ".")
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ENCODINGS_PACKAGE + ".")
    ]
    return [f"{module}.py" for module in modules]


@cache
def reference_modules(exercise: str | None = None) -> tuple[str, ...]:
    """Each exercise's reference module (or ``exercise``'s only) in the catalogue's order, after the
    modules it imports.

    A module's own imports come first (depth first), so every name is defined above its use.
    """
    ordered: list[str] = []

    def add(filename: str) -> None:
        if filename in ordered:
            return
        for dependency in _encodings_imported(filename):
            add(dependency)
        ordered.append(filename)

    for item in EXERCISES:
        if exercise in (None, item.id):
            add(item.reference_file)
    return tuple(ordered)


@cache
def reference_source(exercise: str | None = None) -> str:
    """A correct submission defining every exercise's names (or ``exercise``'s, as its own file would),
    importing only torch, math and typing."""
    parts = [
        '"""The reference implementations of poslab.encodings as one submission file."""',
        "",
        "from __future__ import annotations",
    ]
    for filename in reference_modules(exercise):
        text = (ENCODINGS_DIR / filename).read_text(encoding="utf-8")
        parts += ["", f"# ---- poslab/encodings/{filename}", _without_package_imports(text, filename)]
    return "\n".join(parts) + "\n"


def apply_patches(source: str, patches: tuple[tuple[str, str], ...], mutant: str) -> str:
    for old, new in patches:
        found = source.count(old)
        if found != 1:
            raise PatchError(
                f"mutant {mutant}: the snippet {old!r} occurs {found} times in the "
                f"reference source, expected exactly once; update the mutant"
            )
        source = source.replace(old, new)
    return source


def mutant_specs() -> tuple[MutantSpec, ...]:
    """Every exercise's known mistakes, in the catalogue's order (an exercise may have none)."""
    found: list[MutantSpec] = []
    for exercise in EXERCISES:
        module = f"grader.suite.{exercise.id}.mutants"
        if importlib.util.find_spec(module) is not None:
            found += importlib.import_module(module).MUTANTS
    return tuple(found)


def list_mutants() -> list[Mutant]:
    """Every mutant, built fresh from the current reference (raises PatchError if one is stale)."""
    reference = reference_source()
    return [
        Mutant(spec.name, spec.exercise, spec.description, apply_patches(reference, spec.patches, spec.name), spec.slow)
        for spec in mutant_specs()
    ]


def get_mutant(name: str) -> Mutant:
    for mutant in list_mutants():
        if mutant.name == name:
            return mutant
    raise KeyError(f"unknown mutant {name!r}")
