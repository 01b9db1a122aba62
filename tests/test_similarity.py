"""The similarity rule on the fairness corpus (tests/corpus/): independently written correct
solutions are not flagged, a disguised copy of each (names renamed, comments changed, helpers
reordered: tests/similarity_material.py) is; the starter code never counts as a match."""

from __future__ import annotations

from functools import cache

import pytest

from grader.similarity import SimilarityReport, find_similar_pairs, line_ranges, starter_code
from tests.similarity_material import correct_files, disguised_copy, exercise_share


@cache
def shares(exercise_id: str) -> dict[str, str]:
    """Each corpus file's share of the exercise, by the file's stem (one student each)."""
    found = {path.stem: exercise_share(path.read_text(encoding="utf-8"), exercise_id) for path in correct_files()}
    return {student: code for student, code in found.items() if code is not None}


def test_each_disguised_copy_is_flagged_with_its_original_and_no_independent_pair_is():
    exercise_id = "rope"
    originals = shares(exercise_id)
    assert len(originals) >= 10, "the corpus should give at least ten independent solutions"
    codes = {
        **originals,
        **{f"{student}~copy": disguised_copy(code, exercise_id) for student, code in originals.items()},
    }
    report = find_similar_pairs(exercise_id, codes)
    flagged = {(pair.student_a, pair.student_b) for pair in report.pairs}
    assert flagged == {(student, f"{student}~copy") for student in originals}
    assert all(pair.score >= 0.9 for pair in report.pairs)


@pytest.mark.parametrize("exercise_id", ["sinusoidal", "learned"])
def test_independent_few_line_solutions_that_converge_are_not_flagged(exercise_id):
    originals = shares(exercise_id)
    if len(originals) < 2:
        pytest.skip(f"the corpus has fewer than two solutions of {exercise_id}")
    report = find_similar_pairs(exercise_id, originals)
    assert report.pairs == ()
    assert report.students == tuple(sorted(originals))


def test_a_disguised_copy_is_flagged_in_other_exercises_too():
    for exercise_id, student in (("alibi", "c02_hf_sdpa_bloom"), ("decode", "c14_torchtune_cache")):
        original = shares(exercise_id)[student]
        report = find_similar_pairs(exercise_id, {"ann": original, "bob": disguised_copy(original, exercise_id)})
        assert [(pair.student_a, pair.student_b) for pair in report.pairs] == [("ann", "bob")], exercise_id


def test_the_starter_code_never_counts_as_a_match():
    stub = starter_code("rope")
    report = find_similar_pairs("rope", {"ann": stub, "bob": stub, "cy": stub + "\n# started\n"})
    assert report.pairs == ()


def test_a_report_round_trips_through_json_and_its_regions_name_lines():
    original = shares("rope")["c06_pytorch_tutorial"]
    report = find_similar_pairs("rope", {"ann": original, "bob": disguised_copy(original, "rope")})
    assert SimilarityReport.from_json(report.to_json()) == report
    pair = report.pairs[0]
    apply_line = original.splitlines().index(next(line for line in original.splitlines() if "def apply_rope" in line))
    assert any(first <= apply_line + 1 <= last for first, last in line_ranges(original, pair.regions_a))


def test_line_ranges_merge_touching_regions():
    code = "a = 1\nb = 2\nc = 3\nd = 4\n"  # lines start at 0, 6, 12, 18
    assert line_ranges(code, ((0, 7), (8, 11), (18, 20))) == ((1, 2), (4, 4))
