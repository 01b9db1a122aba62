"""The relative-bias lesson's data and charts: T5's bucket map, the bias matrix, saturation, Shaw's clip."""

import pytest
import torch

from poslab.viz import relative_bias as lesson
from poslab.viz.common import convention_problems


def test_bucket_map_splits_by_sign_when_bidirectional_and_folds_when_causal():
    both = lesson.bucket_frame(32, 128, True, 20).set_index("relative position")["bucket"]
    causal = lesson.bucket_frame(32, 128, False, 20).set_index("relative position")["bucket"]
    assert both[-3] == 3 and both[3] == 16 + 3  # later keys take the upper 16 buckets
    assert (causal.loc[1:] == 0).all() and causal[-5] == 5  # every later key shares bucket 0
    regions = lesson.bucket_frame(32, 128, True, 200).set_index("relative position")["region"]
    assert regions[-7].startswith("exact") and regions[-8] == "log-spaced" and regions[-200].startswith("last")


def test_bucket_ranges_by_hand():
    # Bidirectional (32, 128): 8 exact; bucket 8 holds 8..11 (8 + floor(ln(n/8)/ln 16 * 8) = 8 while n < 8 * 16^(1/8) = 11.31)
    ranges = lesson.bucket_ranges(32, 128, True, reach=500).set_index("bucket")
    assert ranges.loc[7, "distances"] == "1" and ranges.loc[8, "first distance"] == 8
    assert ranges.loc[8, "last distance"] == "11" and ranges.loc[8, "distances"] == "4"
    # The last bucket holds 91, 92, ... with no end (see the next test): no last distance, no count.
    assert ranges.loc[15, "first distance"] == 91
    assert (ranges.loc[15, "last distance"], ranges.loc[15, "distances"]) == (
        "none: every distance beyond",
        "unbounded",
    )
    assert sum(int(count) for count in ranges["distances"][:-1]) == 91  # 0..90: the bounded buckets


def test_a_bucket_cut_by_the_table_says_or_more():
    # Causal (32, 128): bucket 30 runs to 112 (the last bucket starts at 113); a table up to 100 cuts it.
    ranges = lesson.bucket_ranges(32, 128, False, reach=100).set_index("bucket")
    last = ranges.index.max()
    assert ranges.loc[last, "last distance"] == "100 or more" and ranges.loc[last, "distances"].endswith("or more")


def test_last_bucket_starts_before_the_max_distance():
    # Bucket 15 needs floor(ln(n/8)/ln(16) * 8) >= 7, i.e. n >= 8 * 16^(7/8) = 90.5: from 91 on.
    assert lesson.saturation(32, 128, True, 1000) == lesson.Saturation(91, 910, 1000)
    # Causal: 16 exact of 32; bucket 31 from n >= 16 * 8^(15/16) = 112.2, so from 113.
    assert lesson.saturation(32, 128, False, 1000).first_saturated == 113


def test_bias_matrix_is_the_table_along_diagonals():
    chart = lesson.bias_matrix_chart(32, 128, True, 16, head=1, n_heads=4, seed=3)
    table = lesson.random_table(32, 4, 3)
    cell = chart.data[(chart.data["row"] == 5) & (chart.data["col"] == 2)]["value"].item()
    assert cell == pytest.approx(float(table[3, 1]))  # j - i = -3: exact bucket 3
    assert convention_problems(chart) == [] and chart.to_dict()["description"]
    with pytest.raises(ValueError):
        lesson.bias_matrix_chart(32, 128, True, 16, head=4, n_heads=4)


def test_t5_profile_is_flat_past_the_max_distance_and_alibi_keeps_falling():
    frame = lesson.distance_profile_frame(32, 128, 400, head=0, n_heads=4, seed=0)
    t5 = frame[frame["method"].str.startswith("T5")].set_index("distance")["bias"]
    alibi = frame[frame["method"].str.startswith("ALiBi")].set_index("distance")["bias"]
    assert t5.loc[128:].nunique() == 1 and t5.loc[:127].nunique() > 1
    assert alibi[400] == pytest.approx(-400 * 2**-2)  # 4 heads: head 0's slope is 2^(-8/4)


def test_shaw_clips_to_2k_plus_1_vectors():
    frame = lesson.shaw_frame(3, 10).set_index("relative position")["embedding index"]
    assert frame[-10] == 0 and frame[-3] == 0 and frame[0] == 3 and frame[2] == 5 and frame[10] == 6


@pytest.mark.parametrize(
    "chart",
    [
        lambda: lesson.bucket_chart(32, 128, True, 300),
        lambda: lesson.bucket_chart(16, 64, False, 300),
        lambda: lesson.distance_profile_chart(32, 128, 300),
        lambda: lesson.shaw_chart(4, 20),
    ],
)
def test_every_chart_has_a_title_a_description_and_tooltips(chart):
    built = chart()
    assert convention_problems(built) == [] and built.to_dict()["description"]
