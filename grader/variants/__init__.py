"""Correct implementations generated from the reference: the metamorphic fairness family.

A ``Transform`` rewrites one or more top-level definitions of ``grader.mutants.reference_source()``
the way published code writes them (other summation orders, float64 or float32 inside, other
algebraically equal formulas, restructured computation, the other accepted conventions); each
one names where the style comes from. ``family()`` applies every transform on its own, and every
pair of transforms of one exercise that rewrite different definitions, so the family grows with
the catalogue. Every member must get full marks on every hidden test of its exercise
(``tests/test_metamorphic.py``); ``python -m grader mutation`` also compares a recorded equivalent
mutant with the members named in its entry.

An exercise's rewrites live in ``grader/suite/<id>/variants.py`` (``TRANSFORMS``), found from the
catalogue (``poslab.exercises``); ``wrappers`` (float64 or float32 inside, contiguous inputs) are
generic, so every exercise gets them at once and they pair with every rewrite.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import itertools
from dataclasses import dataclass
from functools import cache

from grader.mutants import reference_source
from poslab.exercises import EXERCISE_IDS


@dataclass(frozen=True)
class Transform:
    name: str
    exercise: str
    origin: str  # the published code or practice it follows
    replaces: tuple[tuple[str, str], ...]  # (top-level name, its new source, imports included)
    appended: str = ""  # code added at the end (a wrapper of the exercise's names)


@dataclass(frozen=True)
class Variant:
    name: str  # the transforms' names joined by " + "
    exercise: str
    transforms: tuple[str, ...]
    source: str


def transform(name: str, exercise: str, origin: str, **replaces: str) -> Transform:
    return Transform(name, exercise, origin, tuple((key, value.strip("\n") + "\n") for key, value in replaces.items()))


@cache
def definition_spans(source: str) -> dict[str, tuple[int, int]]:
    """Each top-level function or class of ``source``: its first line (decorators included) and last.
    Every variant rewrites the one reference: parsed once, not once per variant."""
    return {
        node.name: (min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno)
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


def replace_definitions(source: str, replaces: tuple[tuple[str, str], ...]) -> str:
    """``source`` with each named top-level function or class swapped for its new text."""
    lines = source.splitlines(keepends=True)
    spans = definition_spans(source)
    missing = [name for name, _ in replaces if name not in spans]
    if missing:
        raise KeyError(f"the reference defines no {', '.join(missing)}: update the transform")
    for name, text in sorted(replaces, key=lambda item: -spans[item[0]][0]):  # bottom up: spans stay valid
        first, last = spans[name]
        lines[first - 1 : last] = [text]
    return "".join(lines)


@cache
def transforms() -> tuple[Transform, ...]:
    from grader.variants.wrappers import wrapper_transforms

    found = []
    for exercise_id in EXERCISE_IDS:
        module = f"grader.suite.{exercise_id}.variants"
        if importlib.util.find_spec(module) is not None:
            found += importlib.import_module(module).TRANSFORMS
    found += wrapper_transforms()
    names = [t.name for t in found]
    if len(set(names)) != len(names):
        raise ValueError("two transforms share a name")
    return tuple(found)


def _variant(chosen: tuple[Transform, ...]) -> Variant:
    replaces = tuple(item for t in chosen for item in t.replaces)
    source = replace_definitions(reference_source(), replaces) + "".join(t.appended for t in chosen)
    return Variant(" + ".join(t.name for t in chosen), chosen[0].exercise, tuple(t.name for t in chosen), source)


@cache
def family(pairs: bool = True) -> tuple[Variant, ...]:
    """Every transform alone, then (``pairs``) every two of one exercise that rewrite different definitions."""
    singles = [_variant((t,)) for t in transforms()]
    combined = []
    if pairs:
        for first, second in itertools.combinations(transforms(), 2):
            touched = {name for name, _ in first.replaces} & {name for name, _ in second.replaces}
            if first.exercise == second.exercise and not touched:
                combined.append(_variant((first, second)))
    return tuple(singles + combined)
