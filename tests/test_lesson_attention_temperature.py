"""Attention entropy and temperature: the scalings from their definitions, the softmax against closed forms,
and the page."""

import math

import numpy as np
import pytest

from poslab.model_configs import llama4_temperature
from poslab.viz import temperature as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import metrics

LESSON = "attention-temperature"


def test_multipliers_by_hand():
    assert lesson.multiplier("none", 10_000, 4096) == 1.0
    assert lesson.multiplier("log-n", 4096**2, 4096) == pytest.approx(2.0)  # ln(L^2) / ln L
    assert lesson.multiplier("YaRN", 8 * 4096, 4096) == pytest.approx((0.1 * math.log(8) + 1) ** 2)  # 1.459
    assert lesson.multiplier("YaRN", 1000, 4096) == 1.0  # no extension below L
    # Llama 4, floor_scale 8,192 and attn_scale 0.1: 1 + 0.1 ln(1 + floor(n / 8192))
    assert lesson.multiplier("Llama 4", 8191, 4096) == 1.0  # the query at position 8,190 = F - 2
    assert lesson.multiplier("Llama 4", 8192, 4096) == pytest.approx(1 + 0.1 * math.log(2))  # at F - 1: F - 1 stay at 1
    assert lesson.multiplier("Llama 4", 131_072, 4096) == pytest.approx(1 + 0.1 * math.log(17))
    with pytest.raises(KeyError, match="unknown scheme"):
        lesson.multiplier("cosine", 10, 10)


def test_llama4_constants_are_the_published_ones_with_a_source():
    config = llama4_temperature()
    assert (config.floor_scale, config.attn_scale) == (8192, 0.1) and config.attn_temperature_tuning
    assert "Llama-4-Scout" in config.source and config.checked != "unchecked"


def test_equal_distractors_give_the_closed_form():
    # spread 0: every distractor logit is 0, so w = e^(fm) / (e^(fm) + n - 1) and H follows from w
    n, margin, factor = 1000, 3.0, 1.3
    entropy, needle = lesson.attention_stats(lesson.scaled_logits(n, 0.0, margin), factor)
    w = math.exp(factor * margin) / (math.exp(factor * margin) + n - 1)
    rest = (1 - w) / (n - 1)
    assert needle == pytest.approx(w, rel=1e-12)
    assert entropy == pytest.approx(-(w * math.log(w) + (n - 1) * rest * math.log(rest)), rel=1e-12)


def test_random_distractors_flatten_like_one_over_n():
    # E[sum e^x] = (n - 1) e^(spread^2 / 2) for x ~ N(0, spread^2): the needle weight falls like 1/n
    for n in (4096, 65536):
        _, needle = lesson.attention_stats(lesson.scaled_logits(n, 1.0, 8.0), 1.0)
        expected = math.exp(8) / (math.exp(8) + (n - 1) * math.exp(0.5))
        assert needle == pytest.approx(expected, rel=0.05)


def test_log_n_scaling_holds_a_needle_whose_margin_is_ln_l():
    frame = lesson.temperature_frame(4096, 1.0, math.log(4096))
    weights = frame[frame["scheme"] == "log-n"].set_index("keys")["needle weight"]
    plain = frame[frame["scheme"] == "none"].set_index("keys")["needle weight"]
    assert weights[131_072] / weights[4096] > 0.4 and plain[131_072] / plain[4096] < 0.05


def test_log_n_scaling_slows_the_fall_with_the_page_defaults_but_does_not_stop_it():
    # The lesson quotes 0.311 at L and 0.189 at 32 L (L = 4,096, spread 1, margin 8).
    frame = lesson.temperature_frame(4096, 1.0, 8.0).set_index(["scheme", "keys"])["needle weight"]
    assert round(frame["log-n", 4096], 3) == 0.311 and round(frame["log-n", 32 * 4096], 3) == 0.189
    assert frame["none", 32 * 4096] < frame["log-n", 32 * 4096] / 2


def test_charts_follow_the_conventions():
    view = lesson.temperature_view(4096, 1.0, 8.0)
    assert convention_problems(view.needle_chart) == [] and convention_problems(view.multiplier_chart) == []


def test_page_numbers_follow_the_formulas(lesson_page):
    at = lesson_page(LESSON)
    shown = metrics(at)
    assert not at.exception
    assert shown["its maximum, ln n (uniform weights)"] == f"{math.log(131_072):.2f}"
    plain = float(shown["needle weight, none"])
    assert plain == pytest.approx(math.exp(8) / (math.exp(8) + 131_071 * math.exp(0.5)), rel=0.05)
    assert float(shown["needle weight, YaRN"]) > float(shown["needle weight, log-n"]) > plain
    assert shown["Llama 4 floor_scale"] == "8,192" and shown["Llama 4 attn_scale"] == "0.1"
    assert shown["Llama 4 factor at 10,485,760 tokens"] == f"{1 + 0.1 * math.log(1 + 10_485_760 // 8192):.3f}"
    at.select_slider(key="at-keys").set_value(4096).run()
    shown = metrics(at)
    # at the training length the log-n and YaRN factors are 1: every scheme agrees with no scaling
    assert (
        not at.exception
        and shown["needle weight, log-n"] == shown["needle weight, none"] == shown["needle weight, YaRN"]
    )
    at.select_slider(key="at-spread").set_value(2.0).run()
    assert not at.exception and metrics(at)["needle weight, none"] != shown["needle weight, none"]
