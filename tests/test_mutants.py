"""grader.mutants: the reference as one submission file, and the catalogue of buggy variants."""

from __future__ import annotations

import ast

import pytest

from grader.mutants import (
    ALLOWED_IMPORTS,
    PatchError,
    apply_patches,
    get_mutant,
    list_mutants,
    mutant_specs,
    reference_source,
)
from grader.suite.local import namespace_from_source
from poslab.encodings import EXERCISE_API
from poslab.exercises import EXERCISE_IDS


def imported_modules(source: str) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    return modules


def test_reference_source_is_standalone_and_defines_the_api():
    source = reference_source()
    assert imported_modules(source) <= set(ALLOWED_IMPORTS)
    namespace = namespace_from_source(source)
    assert all(callable(namespace[name]) for name in EXERCISE_API)


def test_reference_source_behaves_like_the_package():
    import torch

    import poslab.encodings as package

    namespace = namespace_from_source(reference_source())
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(3))
    assert torch.equal(namespace["apply_rope"](x), package.apply_rope(x))
    assert torch.equal(namespace["sinusoidal_encoding"](7, 6), package.sinusoidal_encoding(7, 6))
    assert torch.equal(namespace["alibi_bias"](12, 5), package.alibi_bias(12, 5))


def test_catalogue_size_and_coverage():
    mutants = list_mutants()
    assert len(mutants) >= 25
    assert len({m.name for m in mutants}) == len(mutants)
    assert all(m.name.isidentifier() and m.name.startswith(m.exercise + "_") for m in mutants)
    for exercise in EXERCISE_IDS:
        assert sum(m.exercise == exercise for m in mutants) >= 4, exercise
    assert all(m.description.strip() for m in mutants)


@pytest.mark.parametrize("mutant", list_mutants(), ids=lambda m: m.name)
def test_each_mutant_is_a_small_standalone_change(mutant):
    reference = reference_source()
    assert mutant.source != reference
    assert imported_modules(mutant.source) <= set(ALLOWED_IMPORTS)
    namespace = namespace_from_source(mutant.source, mutant.name)
    assert all(name in namespace for name in EXERCISE_API)
    changed = set(mutant.source.splitlines()) ^ set(reference.splitlines())
    assert 0 < len(changed) <= 14  # a few lines, not a rewrite


def test_a_patch_must_match_exactly_once():
    with pytest.raises(PatchError, match="0 times"):
        apply_patches("a = 1\n", (("b = 2", "b = 3"),), "missing")
    with pytest.raises(PatchError, match="2 times"):
        apply_patches("a = 1\na = 1\n", (("a = 1", "a = 2"),), "ambiguous")
    assert apply_patches("a = 1\nb = 2\n", (("b = 2", "b = 3"),), "ok") == "a = 1\nb = 3\n"


def test_patches_are_checked_against_the_current_reference():
    for spec in mutant_specs():
        for old, _ in spec.patches:
            assert reference_source().count(old) == 1, (spec.name, old)


def test_get_mutant():
    assert get_mutant("rope_clockwise").exercise == "rope"
    with pytest.raises(KeyError):
        get_mutant("no-such-mutant")
