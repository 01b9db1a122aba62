"""The metamorphic fairness harness: correct implementations generated from the reference
(``grader.variants``) all get full marks on every hidden test of their exercise.

Every transform alone is graded, and a fixed sample of the pairs (every pair when
``POSLAB_FULL_FAMILY=1``). They run in this process (``LocalStudent``: trusted code, the same
semantics as the sandbox) so the whole family takes seconds. The harness can fail: with one
tolerance of the error model made blind to its inputs' scale, members of the family lose points.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

import pytest
import torch

from grader.suite import collect, run_case, suite_modules
from grader.suite.local import LocalStudent
from grader.variants import family, transforms
from poslab.exercises import EXERCISE_IDS

PAIRS_SAMPLED = 40  # of the pairs, in CI (every pair with POSLAB_FULL_FAMILY=1)


def sampled_family() -> list:
    members = family()
    singles = [variant for variant in members if len(variant.transforms) == 1]
    pairs = [variant for variant in members if len(variant.transforms) > 1]
    if os.environ.get("POSLAB_FULL_FAMILY") != "1":
        step = max(1, len(pairs) // PAIRS_SAMPLED)
        pairs = pairs[::step][:PAIRS_SAMPLED]
    return singles + pairs


def lost_points(variant, families: set[str] | None = None) -> list[str]:
    student = LocalStudent.from_source(variant.source, variant.name)
    outcomes = [
        run_case(case, student)
        for case in collect()
        if case.exercise == variant.exercise and (families is None or case.family in families)
    ]
    return [f"{outcome.name}: {outcome.output}" for outcome in outcomes if outcome.status != "passed"]


def test_the_family_covers_every_exercise_with_several_styles():
    counts = {exercise: sum(t.exercise == exercise for t in transforms()) for exercise in EXERCISE_IDS}
    assert all(count >= 3 for count in counts.values()), counts
    assert len(family()) > 2 * len(transforms())  # pairs of compatible transforms


# Speed tests time a call against the reference's on this machine (under load, any call can
# stall): they are validate's and the benchmarks' business. Every member is vectorised.
JUDGED = {case.family for case in collect()} - {"speed"}


@pytest.mark.parametrize("variant", sampled_family(), ids=lambda variant: variant.name)
def test_every_member_of_the_family_gets_full_marks(variant):
    assert lost_points(variant, JUDGED) == []


SCALE_BLIND = {
    # (what is made blind, the function replaced, its replacement): each ignores the size of its inputs
    "angle error without the position": (
        "angle_error",
        lambda positions, frequencies: torch.full(
            (*torch.as_tensor(positions).shape, len(frequencies)), 1e-6, dtype=torch.float64
        ),
    ),
    "softmax error without the logits' size": (
        "softmax_relative_error",
        lambda q, k, bias=None: torch.full((*q.shape[:-1], 1), 1e-6, dtype=torch.float64),
    ),
    "ALiBi bias without the distance": (
        "alibi_bias_tolerance",
        lambda slopes, seq_len: torch.full((len(slopes), seq_len, seq_len), 1e-7, dtype=torch.float64),
    ),
    "decode's out without the scores' size": (
        "decode_tolerance",
        lambda q, k, v, *_: torch.full(q.shape, 1e-7, dtype=torch.float64),
    ),
}


@pytest.mark.parametrize("blind", list(SCALE_BLIND))
def test_the_harness_fails_when_a_tolerance_ignores_its_inputs_scale(monkeypatch, blind):
    name, replacement = SCALE_BLIND[blind]
    modules = [import_module(f"grader.suite.{module}") for module in suite_modules()]  # (and what they import)
    suite_parts = [module for module_name, module in sys.modules.items() if module_name.startswith("grader.suite.")]
    true_model = next(getattr(module, name) for module in suite_parts if hasattr(module, name))
    blinded = set()
    for module in suite_parts:  # wherever the error model's function is bound (each exercise imports it)
        if getattr(module, name, None) is true_model:
            monkeypatch.setattr(module, name, replacement)
            blinded.add(module.__name__.split(".")[2])
    exercises = blinded & set(EXERCISE_IDS)  # the members of the others cannot see the blind model
    assert exercises, f"no exercise's tests use {name}"
    caches = {
        id(value): value
        for module in modules + suite_parts
        for value in vars(module).values()
        if hasattr(value, "cache_clear")
    }.values()  # the expectations the suite caches per process
    for cached in caches:
        cached.cache_clear()  # computed with the true model
    try:
        # One member that loses points proves the harness can fail: the first found ends the search.
        members = (variant for variant in family(pairs=False) if variant.exercise in exercises)
        failing = next(((variant.name, lost) for variant in members if (lost := lost_points(variant, JUDGED))), None)
    finally:
        for cached in caches:
            cached.cache_clear()  # leave no expectation of the blind model behind
    assert failing, f"with {blind}, every member of {', '.join(sorted(exercises))}'s family keeps full marks"
    print(f"\n{blind}: {failing[0]} loses points, e.g. {failing[1][0][:160]}")
