"""The RoPE-base lesson: full turns within L, the critical dimension, Men et al.'s margin, the configs."""

import math

import pytest

from poslab.viz import rope_base as lesson
from poslab.viz.common import convention_problems


def test_full_turn_pairs_by_hand():
    # D = 128, base 10,000: wavelength 2 pi 10^(4 i / 64) <= 4096 <=> i <= 16 log10(4096 / 2 pi) = 45.04
    summary = lesson.turns_summary(128, 10_000.0, 4096)
    assert summary.full_turn_pairs == 46 and summary.pairs == 64
    assert summary.slowest_wavelength == pytest.approx(2 * math.pi * 10_000 ** (126 / 128))
    # Liu et al.: 2 ceil(64 * log_10000(4096 / 2 pi)) = 2 ceil(45.04) = 92
    assert summary.critical_dimension == 92


def test_a_larger_base_leaves_fewer_pairs_a_full_turn():
    assert (
        lesson.turns_summary(128, 500_000.0, 8192).full_turn_pairs
        < lesson.turns_summary(128, 10_000.0, 8192).full_turn_pairs
    )


def test_margin_is_d_over_2_at_zero_and_its_first_negative_is_reported():
    margin = lesson.similarity_margin(128, 10_000.0, 3000)
    assert margin[0] == pytest.approx(64.0)
    first = lesson.first_negative(128, 10_000.0, 3000)
    assert first is not None and margin[first] < 0 and (margin[:first] >= 0).all()


def test_real_configs_name_a_source_and_a_check_for_every_row():
    table = lesson.real_configs().set_index("model")
    assert {
        "Llama 2 7B",
        "Llama 3 8B",
        "Llama 3.1 8B",
        "Llama 3.2 1B / 3B",
        "Llama 4 Scout",
        "Qwen3 8B",
        "Gemma 3 27B",
        "Mistral 7B v0.1",
        "Phi-3.5 mini",
    } <= set(table.index)
    sources = lesson.real_config_sources().set_index("model")
    assert list(sources.index) == list(table.index) and sources["config.json of"].str.contains("/").all()
    assert sources["checked against"].str.len().min() >= 9 and sources.loc["Phi-4", "checked against"] == "unchecked"
    assert "factor 8," in table.loc["Llama 3.1 8B", "rope_scaling"]
    assert "factor 32," in table.loc["Llama 3.2 1B / 3B", "rope_scaling"]


@pytest.mark.parametrize(
    "chart", [lambda: lesson.turns_chart(128, 10_000.0, 4096), lambda: lesson.margin_chart(128, 10_000.0, 100_000)]
)
def test_charts_follow_the_conventions(chart):
    built = chart()
    assert convention_problems(built) == [] and built.to_dict()["description"]
