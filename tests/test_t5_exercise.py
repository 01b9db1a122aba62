"""Exercise 6, T5 relative buckets: the hidden suite's oracle by hand, and correct styles graded in the sandbox."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from grader.suite.t5.oracle import oracle_t5_bucket_bounds
from poslab.exercises import EXERCISES

CORRECT = Path(__file__).parent / "corpus" / "correct"
T5_STYLES = ("c01_einsum_throughout.py", "c10_functional_oneliners.py")  # torch.where in float64; ln - ln with clamp


def exact_bucket(r: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> int:
    low, high = oracle_t5_bucket_bounds(torch.tensor([r]), bidirectional, num_buckets, max_distance)
    assert low.item() == high.item(), f"{r} is on a bucket edge"
    return int(low.item())


def test_oracle_by_hand():
    # Bidirectional 32/128: 16 per side, 8 exact, then 8 + floor(ln(n / 8) / ln 16 * 8), at most 15; r > 0 adds 16.
    assert [exact_bucket(r) for r in (0, -1, -7, -11, -12, -90, -91, -128, -(10**6))] == [0, 1, 7, 8, 9, 14, 15, 15, 15]
    assert [exact_bucket(r) for r in (1, 7, 12, 10**6)] == [17, 23, 25, 31]
    # Causal 32/128: 16 exact, then 16 + floor(ln(n / 16) / ln 8 * 16): 112 -> 30 (14.97), 113 -> 31 (15.04).
    assert [exact_bucket(r, False) for r in (5, 0, -15, -16, -112, -113, -5000)] == [0, 0, 15, 16, 30, 31, 31]
    # 8/20 bidirectional: 4 per side, 2 exact, then 2 + floor(ln(n / 2) / ln 10 * 2): 3 -> 2 (0.35), 7 -> 3 (1.09).
    assert [exact_bucket(r, True, 8, 20) for r in (-1, -3, -7, -19, 1, 3)] == [1, 2, 3, 3, 5, 6]


def test_oracle_accepts_either_side_only_on_a_bucket_edge():
    # n = 16 (32/128 bidirectional): ln(16/8) / ln 16 * 8 = 2 exactly; float32 may round it to 1.99999.
    low, high = oracle_t5_bucket_bounds(torch.tensor([-16, -17, -15, -8]), True, 32, 128)
    assert low.tolist() == [9, 10, 9, 8] and high.tolist() == [10, 10, 9, 8]  # n = 8 = E: ln 1 = 0, no edge


def test_oracle_without_clamp_describes_the_overflow():
    low, _ = oracle_t5_bucket_bounds(torch.tensor([-1000]), True, 32, 128, clamp=False)
    assert low.item() == 8 + 13  # 8 + floor(ln(1000 / 8) / ln 16 * 8) = 8 + floor(13.93): past the last bucket, 15


@pytest.fixture(scope="module")
def grading(warm_grader):
    return warm_grader


def implemented_exercises(source: str) -> list[str]:
    """The exercises whose every name the file defines at its top level (a style need not do them all)."""
    defined = {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    return [exercise.id for exercise in EXERCISES if set(exercise.names) <= defined]


@pytest.mark.parametrize("filename", T5_STYLES)
def test_correct_t5_styles_score_full_marks_in_the_sandbox(grading, filename):
    from grader.api import load_submission

    source = (CORRECT / filename).read_text(encoding="utf-8")
    result = grading.grade(
        load_submission({"solution.py": source}, Path(filename).stem, grading.settings), implemented_exercises(source)
    )
    t5 = result.exercises["t5"]
    failed = [f"{test.name}: {test.output}" for test in result.tests if test.status != "passed"]
    assert result.status == "graded" and t5.max_score >= 20 and t5.score == t5.max_score, failed
    assert result.score == result.max_score, failed
