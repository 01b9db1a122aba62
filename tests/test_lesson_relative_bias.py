"""The relative-bias page: T5's bucket map, saturation, the bias matrix and Shaw's clip follow their widgets."""

import pytest

from tests.app_harness import NUMBERS, chart_titles, metrics, numbers

LESSON = "relative-bias"


def ranges(at):
    return next(frame.value for frame in at.dataframe if "first distance" in frame.value.columns)


def test_page_draws_every_chart_with_its_numbers_and_asks_before_it_shows(lesson_page):
    at = lesson_page(LESSON)
    assert not at.exception
    titles = chart_titles(at)
    assert len(titles) == 4 and len([e for e in at.expander if e.label == NUMBERS]) == 4
    assert titles[0] == "T5 buckets, bidirectional (encoder): 32 buckets, max distance 128"
    assert titles[3].startswith("Shaw et al. (2018): 9 learned vectors")  # k = 4: 2k + 1
    # Each quick check is shown once; the first comes before the bucket map it predicts.
    keys = [radio.key for radio in at.radio]
    assert keys[0] == "qc-choice-relative-bias-causal-later-keys" and len(keys) == len(set(keys)) == 3


def test_saturation_metrics_follow_buckets_and_direction(lesson_page):
    at = lesson_page(LESSON)
    # Bidirectional 32/128: 16 per side, 8 exact; the last bucket 15 from n >= 8 * 16^(7/8) = 90.5, so 91.
    shown = metrics(at)
    assert shown["first distance back in the last bucket (bidirectional)"] == "91"
    assert shown["distances 0..1,000 back sharing it"] == "910"  # 91..1000
    at.toggle(key="rb-bidirectional").set_value(False).run()
    # Causal: 32 buckets for the past, 16 exact; bucket 31 from n >= 16 * 8^(15/16) = 112.2, so 113.
    assert not at.exception and metrics(at)["first distance back in the last bucket (causal)"] == "113"
    assert chart_titles(at)[0].startswith("T5 buckets, causal (decoder)")
    at.toggle(key="rb-bidirectional").set_value(True).run()
    at.selectbox(key="rb-buckets").set_value(8).run()
    # 4 per side, 2 exact: bucket 3 from 2 + floor(ln(n/2) / ln 64 * 2) = 3, i.e. n >= 2 * 8 = 16.
    assert not at.exception and metrics(at)["first distance back in the last bucket (bidirectional)"] == "16"
    assert metrics(at)["distances 0..1,000 back sharing it"] == "985"


def test_bucket_table_has_one_row_per_bucket_and_exact_buckets_first(lesson_page):
    at = lesson_page(LESSON)
    table = ranges(at)
    assert list(table["bucket"]) == list(range(16))  # the earlier keys' half of 32
    assert list(table["distances"][:8]) == ["1"] * 8 and table["first distance"][8] == 8
    # The last bucket holds every distance from its first on: no last distance, no count (not "4096 and beyond").
    assert (table["last distance"].iloc[-1], table["distances"].iloc[-1]) == (
        "none: every distance beyond",
        "unbounded",
    )
    at.selectbox(key="rb-max-distance").set_value(512).run()
    wider = ranges(at)
    assert not at.exception and wider["first distance"].iloc[-1] > table["first distance"].iloc[-1]
    bucket_numbers = numbers(at, 0)
    assert bucket_numbers["relative position"].min() == -300 and bucket_numbers["relative position"].max() == 300
    at.slider(key="rb-reach").set_value(50).run()
    assert not at.exception and numbers(at, 0)["relative position"].min() == -50


def test_bias_matrix_is_constant_along_diagonals_and_follows_length_head_and_seed(lesson_page):
    at = lesson_page(LESSON)
    matrix = numbers(at, 1).to_numpy()
    assert matrix.shape == (32, 32)
    for offset in (-5, 0, 3):  # one value per diagonal j - i
        assert len(set(matrix.diagonal(offset).round(12))) == 1
    assert matrix.diagonal(-1)[0] != matrix.diagonal(1)[0]  # bidirectional: before and after differ
    at.slider(key="rb-seq-len").set_value(12).run()
    assert not at.exception and numbers(at, 1).shape == (12, 12)
    at.selectbox(key="rb-head").set_value(2).run()
    assert chart_titles(at)[1].startswith("Head 2:")
    before = numbers(at, 1).to_numpy()
    at.number_input(key="rb-seed").set_value(7).run()
    assert not at.exception and "seed 7" in chart_titles(at)[1]
    assert (numbers(at, 1).to_numpy() != before).any()


def test_profile_is_flat_past_the_last_bucket_and_shaw_follows_the_clip(lesson_page):
    at = lesson_page(LESSON)
    profile = numbers(at, 2)
    t5 = profile[profile["method"].str.startswith("T5")].set_index("distance")["bias"]
    alibi = profile[profile["method"].str.startswith("ALiBi")].set_index("distance")["bias"]
    # The profile is causal: 32/128 saturates from 113 on (16 * 8^(15/16) = 112.2), before the maximum distance.
    assert t5.loc[113:].nunique() == 1 and t5[112] != t5[113] and t5.loc[:112].nunique() > 1
    assert alibi[100] == pytest.approx(-100 / 4)  # 4 heads: head 0's slope is 2^(-8/4)
    at.slider(key="rb-clip").set_value(6).run()
    assert not at.exception and chart_titles(at)[3].startswith("Shaw et al. (2018): 13 learned vectors")
    shaw = numbers(at, 3).set_index("relative position")["embedding index"]
    assert shaw[-32] == 0 and shaw[0] == 6 and shaw[6] == 12 and shaw[32] == 12
