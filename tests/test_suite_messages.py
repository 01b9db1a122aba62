"""Every failure message of the hidden suite claims only what holds for the submission it judged.

Each known mistake (``grader.mutants``) runs through its own exercise's tests, and so do a few correct
variants (``grader.variants``) and a probe: RoPE with interpolated positions, which uses the positions,
only less. Checked: a diagnosis ("Your values match a known mistake: X") names the mistake the mutant
makes; "are the positions used?" appears only when the scores do not change with the offset, measured
here on the submission itself; a correct variant fails nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

import pytest
import torch

from grader.mutants import apply_patches, list_mutants, reference_source
from grader.suite import collect, run_case
from grader.suite.local import LocalStudent
from grader.suite.rope.mutants import ROPE_POSITIONS
from grader.variants import family
from poslab.exercises import EXERCISE_IDS
from poslab.vocabulary import TestStatus

DIAGNOSIS = re.compile(
    r"Your (?:values|buckets) match (?:a known mistake|several known mistakes this test cannot tell apart): (.*?)(?:\.\s|\.$)"
)
POSITIONS_UNUSED = "are the positions used?"
VARIANTS_PER_EXERCISE = 2

# What each mutant's diagnosis may name: phrases of the mistake its description states.
ACCEPTED: dict[str, tuple[str, ...]] = {
    "attention_no_scale": ("not divided by sqrt(D)",),
    "attention_scale_by_d": ("divided by D instead of sqrt(D)",),
    "attention_scale_by_value_dim": ("v's feature size",),
    "attention_softmax_over_queries": ("over the queries",),
    "sinusoidal_positions_from_one": ("positions start at 1",),
    "sinusoidal_exponent_i_over_d": ("exponent is i/d",),
    "sinusoidal_tensor2tensor_schedule": ("tensor2tensor",),
    "sinusoidal_sin_cos_swapped": ("sin and cos are swapped, in the interleaved layout", "swapped, in either layout"),
    "sinusoidal_default_base_1000": ("default base is 1000",),
    "sinusoidal_concatenated_cos_first": ("sin and cos are swapped, in the concatenated layout", "swapped, in either"),
    "rope_clockwise": ("clockwise",),
    "rope_exponent_i_over_d": ("exponent is i/D",),
    "rope_positions_from_one": ("positions start at 1",),
    "rope_default_base_500000": ("default base is 500000",),
    "rope_ignores_positions": ("positions argument is ignored",),
    "rope_same_angle_everywhere": ("same angle",),
    "alibi_slopes_off_by_one": ("exponent runs over h = 0",),
    "alibi_slopes_first_n_of_next_power": ("first n slopes of the next power of two",),
    "alibi_slopes_reversed": ("increasing order",),
    "alibi_slopes_not_power_of_two_formula": ("2^(-8(h+1)/n) is used for every n",),
    "t5_sign_reversed": ("query - key",),
    "t5_no_clamp": ("not clamped",),
    "t5_direction_flag_ignored": ("bidirectional flag is ignored",),
    "decode_position_is_cache_length": ("number of keys in the cache",),
    "decode_rotates_twice": ("rotated twice",),
    "decode_raw_never_rotated": ("never rotated",),
    "decode_raw_rotated_by_slot": ("by their slot in the cache",),
    "decode_window_off_by_one": ("W + 1",),
    "decode_prefill_window_off_by_one": ("t - s <= W", "W + 1"),
    "decode_prefill_not_causal": ("not masked causally",),
    "decode_prefill_ignores_window": ("the prefill ignores the window",),
    "decode_padding_keys_attended": ("attention mask is not applied",),
    "decode_query_not_rotated": ("queries are not rotated",),
    "decode_pairing_ignored": ("the other pairing is used",),  # half always: interleaved cases get the other
    # Where the hidden log-spaced test's distances give both the same buckets, its message names both and says so.
    "t5_log_denominator_floor_divided": ("an integer division", "the exact half is taken of num_buckets"),
    "t5_upper_half_from_num_buckets_minus_n": ("num_buckets - N",),
    "extend_linear_multiplies": ("multiplied by s",),
    "extend_yarn_ramp_reversed": ("ramp is reversed",),
    "extend_dynamic_yarn_factor": ("s T / L (YaRN's dynamic scaling)",),
    "extend_dynamic_no_exponent": ("exponent D / (D - 2) is missing",),
    "extend_dynamic_no_length_is_stretched": ("T is taken as s L",),
    "extend_llama3_bands_swapped": ("bands",),
}


# Diagnoses found untrue and not yet fixed: (mutant, test). Each has a strict xfail below, so a fix
# shows up (and the entry goes) rather than hiding here.
@cache
def _cases_of(exercise: str) -> tuple:
    return tuple(case for case in collect() if case.exercise == exercise and case.family != "speed")


@cache
def _failures(source: str, exercise: str) -> tuple[LocalStudent, list[tuple[str, str]]]:
    student = LocalStudent.from_source(source)
    failed = []
    for case in _cases_of(exercise):
        outcome = run_case(case, student)
        if outcome.status != TestStatus.PASSED:
            failed.append((case.name, outcome.output))
    return student, failed


def _scores_change_with_offset(student: LocalStudent) -> bool:
    """Measured on the submission itself, in float64: <rope(q, m), rope(k, n)> at offsets -7, 0 and +7."""
    apply_rope = student.namespace["apply_rope"]
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 1, 1, 32, generator=generator, dtype=torch.float64) for _ in range(2))

    def score(m: int, n: int) -> float:
        both = apply_rope(torch.cat([q, k], dim=-2), positions=torch.tensor([m, n]))
        return float((both[..., 0, :] * both[..., 1, :]).sum())

    scale = float(q.norm() * k.norm())
    return any(abs(score(m, n) - score(3, 10)) > 1e-9 * scale for m, n in ((3, 3), (10, 3)))


def _untrue_claims(name: str, student: LocalStudent, failed: list[tuple[str, str]]) -> list[str]:
    untrue = []
    for test, output in failed:
        for named in DIAGNOSIS.findall(output):
            if not any(phrase in named for phrase in ACCEPTED.get(name, ())):
                untrue.append(f"{test}: names the known mistake {named!r}")
        if POSITIONS_UNUSED in output and _scores_change_with_offset(student):
            untrue.append(f"{test}: asks {POSITIONS_UNUSED!r}, yet the scores change with the offset")
    return untrue


def _mutants_of(exercise: str) -> list:
    return [mutant for mutant in list_mutants() if mutant.exercise == exercise and not mutant.slow]


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_every_diagnosis_names_the_mutants_mistake(exercise):
    """A mutant's failures claim only its own mistake, and "are the positions used?" only when they are not."""
    untrue = []
    for mutant in _mutants_of(exercise):
        student, failed = _failures(mutant.source, exercise)
        untrue += [
            f"{mutant.name} ({mutant.description}): {claim}" for claim in _untrue_claims(mutant.name, student, failed)
        ]
    assert not untrue, "messages that claim what does not hold:\n" + "\n".join(untrue)


def test_positions_message_only_when_the_scores_ignore_the_offset():
    """RoPE with positions interpolated by 1/16 uses the positions: no message may say it does not."""
    source = apply_patches(reference_source(), ((ROPE_POSITIONS, ROPE_POSITIONS + " / 16"),), "interpolated")
    student, failed = _failures(source, "rope")
    assert _scores_change_with_offset(student)
    assert failed, "the probe is wrong RoPE: the value tests must fail it"
    assert not _untrue_claims("rope_interpolated_positions", student, failed)


def test_the_offset_check_can_fail():
    """The measurement itself tells a submission that ignores positions from one that uses them."""
    ignoring = next(m for m in list_mutants() if m.name == "rope_ignores_positions")
    assert not _scores_change_with_offset(LocalStudent.from_source(ignoring.source))
    assert _scores_change_with_offset(LocalStudent.from_source(reference_source()))


def _sampled_variants() -> list:
    chosen: dict[str, list] = defaultdict(list)
    for variant in family(pairs=False):
        if len(chosen[variant.exercise]) < VARIANTS_PER_EXERCISE:
            chosen[variant.exercise].append(variant)
    return [variant for variants in chosen.values() for variant in variants]


@pytest.mark.parametrize("variant", _sampled_variants(), ids=lambda variant: variant.name)
def test_a_correct_variant_fails_nothing(variant):
    """A correct solution in another style gets no failure, hence no message at all."""
    _, failed = _failures(variant.source, variant.exercise)
    assert not failed, f"{variant.name}: " + "; ".join(f"{test}: {output}" for test, output in failed)
