"""Precision: rounding positions to float16 and bfloat16, checked against numpy's float16 and a bfloat16 written
from its bit layout; the score demo; the page."""

import numpy as np
import pytest
import torch

from poslab.viz import precision as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import metrics

LESSON = "precision"


def bfloat16_by_hand(values: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (keep the top 16 bits, round to nearest even) and read them back."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounding = 0x7FFF + ((bits >> 16) & 1)
    return (((bits + rounding) >> 16) << 16).astype(np.uint32).view(np.float32).astype(np.float64)


def float16_by_hand(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return values.astype(np.float16).astype(np.float64)


def largest_error_by_hand(rounder, start: int, end: int) -> float:
    every = np.arange(start, end + 1, dtype=np.float64)
    return float(np.abs(rounder(every) - every).max())


def test_the_issue_numbers_float16_2_then_4_and_bfloat16_16():
    assert largest_error_by_hand(float16_by_hand, 4096, 8191) == 2 == lesson.largest_error("float16", 4096, 8191)
    assert largest_error_by_hand(float16_by_hand, 8192, 16383) == 4 == lesson.largest_error("float16", 8192, 16383)
    assert largest_error_by_hand(bfloat16_by_hand, 4096, 8191) == 16 == lesson.largest_error("bfloat16", 4096, 8191)
    assert lesson.segment_errors() == {"float16 4096": 2.0, "float16 8192": 4.0, "bfloat16 4096": 16.0}


@pytest.mark.parametrize("name, rounder", [("float16", float16_by_hand), ("bfloat16", bfloat16_by_hand)])
def test_every_segment_matches_the_hand_rounding(name, rounder):
    table = lesson.position_errors(1 << 16)
    for start, end, error in table.loc[table["dtype"] == name, ["from", "to", "largest error"]].to_numpy():
        assert error == largest_error_by_hand(rounder, int(start), int(end))


def test_exact_ranges():
    every = np.arange(1 << 17, dtype=np.float64)
    assert lesson.exact_up_to(torch.float16) == int(np.argmax(float16_by_hand(every) != every)) - 1 == 2048
    assert lesson.exact_up_to(torch.bfloat16) == int(np.argmax(bfloat16_by_hand(every) != every)) - 1 == 256
    assert lesson.exact_up_to(torch.float32) == 2**24


def rope_score_by_hand(q: np.ndarray, k: np.ndarray, offset: float, base: float = 10_000.0) -> float:
    theta = base ** (-np.arange(0, len(q), 2) / len(q))
    zq, zk = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    return float(np.real(zq * np.conj(zk) * np.exp(1j * offset * theta)).sum())


def test_exact_score_depends_on_the_offset_only_and_rounding_moves_it():
    view = lesson.score_view(8)
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 64, generator=generator, dtype=torch.float64)[0].numpy() for _ in range(2))
    assert view.exact == pytest.approx(rope_score_by_hand(q, k, 8), abs=1e-9)
    frame = lesson.score_frame(8)
    exact = frame[frame["way"] == "exact (float64)"]["score"]
    assert exact.max() - exact.min() < 1e-9
    # bfloat16 holds both positions exactly up to 256, float16 up to 2,048: nothing moves before
    assert view.first_wrong["positions in bfloat16"] > 256 and view.first_wrong["positions in float16"] > 2048
    assert view.largest_change["positions in bfloat16"] > 0.1 and view.largest_change["angles in float32"] > 1e-3
    assert frame[frame["way"] == "positions in float16"]["position"].max() <= lesson.FLOAT16_MAX


def test_charts_follow_the_conventions():
    assert convention_problems(lesson.precision_view().chart) == []
    assert convention_problems(lesson.score_view(4).chart) == []


def test_the_error_axis_reads_as_plain_numbers_and_names_where_exact_values_are_drawn():
    axis = lesson.precision_view().chart.to_dict()["encoding"]["y"]["axis"]
    assert "s" not in axis.get("format", "")  # SI prefixes would read 0.01 as "10m"
    assert "'exact'" in axis["labelExpr"] and "0.01" in axis["labelExpr"]


def test_page_shows_the_exact_ranges_and_the_segment_errors(lesson_page):
    at = lesson_page(LESSON)
    shown = metrics(at)
    assert not at.exception
    assert shown["float16: every integer exact up to"] == "2,048"
    assert shown["bfloat16: every integer exact up to"] == "256"
    assert shown["float32: every integer exact up to"] == f"{2**24:,}"
    assert shown["float16, 4,096–8,191"] == "2"
    assert shown["float16, 8,192–16,383"] == "4"
    assert shown["bfloat16, 4,096–8,191"] == "16"
    table = next(frame.value for frame in at.dataframe if "bfloat16" in frame.value.columns).set_index("from")
    assert table.loc[32768, "float16"] == "overflow" and table.loc[4096, "bfloat16"] == "16"


def test_page_offset_changes_the_score(lesson_page):
    at = lesson_page(LESSON)
    before = metrics(at)["exact score (any position)"]
    at.select_slider(key="pr-offset").set_value(64).run()
    assert not at.exception and metrics(at)["exact score (any position)"] != before
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 64, generator=generator, dtype=torch.float64)[0].numpy() for _ in range(2))
    assert metrics(at)["exact score (any position)"] == f"{rope_score_by_hand(q, k, 64):.4f}"


def test_float32_angle_is_exact_for_pair_0_and_off_by_up_to_003_rad_for_pair_1():
    # The float32-enough feedback: theta = 1 gives an integer product; pair 1 at D = 128 lands 1/16 apart.
    theta_1 = 10_000.0 ** (-2 / 128)
    assert theta_1 == pytest.approx(0.866, abs=5e-4)
    positions = np.arange(999_000, 1_000_001, dtype=np.float64)
    assert (positions.astype(np.float32) * np.float32(1.0) == positions).all()
    product = positions.astype(np.float32) * np.float32(theta_1)  # rounded once, as float32 does
    rounding = np.abs(product.astype(np.float64) - positions * np.float64(np.float32(theta_1)))
    assert 0.02 < rounding.max() <= 1 / 32  # half of the 1/16 spacing between 524,288 and 1,048,576


def test_bfloat16_cos_sin_give_an_error_of_fixed_size_at_every_position():
    # The text after PR #29285: float32 angles, cos and sin cast to bfloat16, the rotation in bfloat16.
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 2, generator=generator, dtype=torch.float64)
    errors = []
    for start in (10, 100_000):
        angles = (torch.arange(start, start + 64, dtype=torch.float32) * 0.5).double()
        cos, sin = angles.cos(), angles.sin()
        exact = torch.stack([x[:, 0] * cos - x[:, 1] * sin, x[:, 0] * sin + x[:, 1] * cos], -1)
        xb, cb, sb = x.bfloat16(), cos.bfloat16(), sin.bfloat16()
        rounded = torch.stack([xb[:, 0] * cb - xb[:, 1] * sb, xb[:, 0] * sb + xb[:, 1] * cb], -1).double()
        errors.append(float(((rounded - exact).norm(dim=-1) / exact.norm(dim=-1)).max()))
    assert all(1e-3 < error < 1.5e-2 for error in errors), errors  # a few parts in a thousand, at 10 and at 100,000
