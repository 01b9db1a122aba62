"""Pairs of students whose code for one exercise is unusually similar (copydetect's winnowing).

Each student's code is tokenised and filtered by copydetect (names become ``V``/``F``/``O``,
strings ``S``, comments and layout dropped), so renaming, new comments and reordered helpers do
not hide a copy. The exercise's starter code (its stub under ``exercises/``) is boilerplate: what
it holds never counts as a match. ``SimilarityRule`` says when a pair is flagged; its defaults were
chosen on the fairness corpus (``tests/test_similarity.py``).
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cache, lru_cache

import numpy as np

from poslab.config import PROJECT_ROOT
from poslab.exercises import get_exercise

Region = tuple[int, int]  # [start, end) character offsets in a student's code as handed in


@dataclass(frozen=True)
class SimilarityRule:
    """When a pair is flagged. On the corpus (28 independent correct files per exercise), renamed
    copies score at least 0.92 and independent solutions at most 0.73, except the few-line ones of
    ``sinusoidal`` and ``learned``, which converge on the same code: ``min_matched_chars`` (about 8
    lines once names are folded) keeps those apart, so copies that short are not flagged either."""

    noise_chars: int = 40  # a match is a run of at least this many filtered characters
    min_score: float = 0.85  # the larger of the two shares of code found in the other's
    min_matched_chars: int = 250  # filtered characters matched, at least


@dataclass(frozen=True)
class SimilarPair:
    student_a: str  # the earlier name in sort order
    student_b: str
    score: float  # max(share_a, share_b)
    share_a: float  # of student_a's code (starter code left out), the share found in student_b's
    share_b: float
    matched_chars: int  # filtered characters of student_a's code matched
    regions_a: tuple[Region, ...]  # where in student_a's code the matches are
    regions_b: tuple[Region, ...]


@dataclass(frozen=True)
class SimilarityReport:
    exercise: str
    students: tuple[str, ...]  # every student whose code was compared, sorted
    pairs: tuple[SimilarPair, ...]  # the flagged pairs, highest score first
    rule: SimilarityRule = field(default_factory=SimilarityRule)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SimilarityReport:
        data = json.loads(text)
        pairs = tuple(
            SimilarPair(
                **{
                    **pair,
                    "regions_a": tuple(tuple(region) for region in pair["regions_a"]),
                    "regions_b": tuple(tuple(region) for region in pair["regions_b"]),
                }
            )
            for pair in data["pairs"]
        )
        return cls(data["exercise"], tuple(data["students"]), pairs, SimilarityRule(**data["rule"]))


def starter_code(exercise_id: str) -> str:
    """The exercise's stub as students get it (``exercises/<file>``)."""
    return (PROJECT_ROOT / "exercises" / get_exercise(exercise_id).filename).read_text(encoding="utf-8")


@cache
def _copydetect():
    """copydetect, imported on first use: it imports matplotlib (a second or two)."""
    import copydetect

    return copydetect


@cache
def _boilerplate(exercise_id: str, noise_chars: int) -> np.ndarray:
    """The starter code's fingerprints: matches made of these are never counted."""
    stub = _copydetect().CodeFingerprint(
        get_exercise(exercise_id).filename, noise_chars, 1, language="python", fp=io.StringIO(starter_code(exercise_id))
    )
    return np.array(sorted(stub.hashes), dtype=np.int64)


@lru_cache(maxsize=1024)  # a rerun of the check on a class mostly meets code it has seen
def _fingerprint(exercise_id: str, code: str, noise_chars: int):
    boilerplate = _boilerplate(exercise_id, noise_chars)
    filename = get_exercise(exercise_id).filename
    return _copydetect().CodeFingerprint(
        filename, noise_chars, 1, boilerplate=boilerplate, language="python", fp=io.StringIO(code)
    )


def _regions(slices: np.ndarray, length: int) -> tuple[Region, ...]:
    if len(slices) == 0 or len(slices[0]) == 0:
        return ()
    return tuple((int(start), min(int(end), length)) for start, end in zip(slices[0], slices[1]))


def _compare(a: str, b: str, codes: Mapping[str, str], prints: Mapping[str, object], rule: SimilarityRule):
    matched, (share_a, share_b), (slices_a, slices_b) = _copydetect().compare_files(prints[a], prints[b])
    share_a, share_b = float(share_a), float(share_b)
    score = max(share_a, share_b)
    if score < rule.min_score or int(matched) < rule.min_matched_chars:
        return None
    return SimilarPair(
        a,
        b,
        round(score, 4),
        round(share_a, 4),
        round(share_b, 4),
        int(matched),
        _regions(slices_a, len(codes[a])),
        _regions(slices_b, len(codes[b])),
    )


def find_similar_pairs(
    exercise_id: str, codes: Mapping[str, str], rule: SimilarityRule = SimilarityRule()
) -> SimilarityReport:
    """Compare every two students' code for ``exercise_id`` (``codes``: student -> their code)."""
    get_exercise(exercise_id)  # a clear KeyError for an unknown exercise
    students = tuple(sorted(codes))
    prints = {student: _fingerprint(exercise_id, codes[student], rule.noise_chars) for student in students}
    found = (_compare(a, b, codes, prints, rule) for a, b in itertools.combinations(students, 2))
    pairs = sorted((pair for pair in found if pair is not None), key=lambda pair: (-pair.score, pair.student_a))
    return SimilarityReport(exercise_id, students, tuple(pairs), rule)


def line_ranges(code: str, regions: tuple[Region, ...]) -> tuple[tuple[int, int], ...]:
    """The 1-based first and last line of each region, merged where they touch."""
    starts = [0] + [index + 1 for index, char in enumerate(code) if char == "\n"]
    ranges: list[tuple[int, int]] = []
    for start, end in sorted(regions):
        first = int(np.searchsorted(starts, start, side="right"))
        last = int(np.searchsorted(starts, max(start, end - 1), side="right"))
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(last, ranges[-1][1]))
        else:
            ranges.append((first, last))
    return tuple(ranges)
