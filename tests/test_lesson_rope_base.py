"""The RoPE-base page: full turns, the critical dimension, Men et al.'s margin and bound, real configurations."""

import math

import numpy as np

from tests.app_harness import chart_titles, metrics, numbers

LESSON = "rope-base"


def margin(head_dim: int, base: float, distances: np.ndarray) -> np.ndarray:
    """Men et al.'s B(m) = sum_i cos(m theta_i), theta_i = base^(-2i/D), written here from the paper."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    return np.cos(np.outer(distances, theta)).sum(axis=1)


def test_turns_and_critical_dimension_by_hand(lesson_page):
    at = lesson_page(LESSON)
    assert not at.exception and len(chart_titles(at)) == 3
    # D = 128, b = 10^4, L = 8192: 2 pi 10^(4 i / 64) <= 8192  <=>  i <= 16 log10(8192 / 2 pi) = 49.8
    shown = metrics(at)
    assert shown["pairs with a full turn within L"] == "50 of 64"
    assert shown["critical dimension d_extra (features)"] == "100 of 128"  # 2 ceil(64 * 0.7788) = 2 * 50
    assert shown["slowest wavelength (positions)"] == f"{2 * math.pi * 1e4 ** (126 / 128):,.0f}"
    at.selectbox(key="base-b").set_value(500_000).run()
    # i <= 64 log(1303.8) / log(500000) = 34.98
    assert not at.exception and metrics(at)["pairs with a full turn within L"] == "35 of 64"
    assert chart_titles(at)[0].startswith("Base 500,000, D = 128")
    at.selectbox(key="base-head-dim").set_value(64).run()
    assert not at.exception and metrics(at)["pairs with a full turn within L"].endswith("of 32")
    turns = numbers(at, 0)
    assert len(turns) == 32 and (turns["full turn"] == "yes").sum() == int(
        metrics(at)["pairs with a full turn within L"].split()[0]
    )


def test_first_negative_margin_matches_the_formula(lesson_page):
    at = lesson_page(LESSON)
    distances = np.arange(8193)
    expected = int(np.argmax(margin(128, 1e4, distances) < 0))
    assert metrics(at)["first distance with B(m) < 0, for this base"] == f"{expected:,}"
    at.selectbox(key="base-b").set_value(500_000).run()
    assert (margin(128, 5e5, distances) >= 0).all()
    assert not at.exception and metrics(at)["first distance with B(m) < 0, for this base"] == "none up to L"
    drawn = numbers(at, 1)
    assert drawn["B(m)"].iloc[0] == 64  # B(0) = D / 2


def test_bound_shows_the_first_crossing_and_the_stricter_value_and_is_left_out_past_16k(lesson_page):
    at = lesson_page(LESSON)
    shown = metrics(at)
    first = float(shown["first base that passes up to 8K (Men et al.'s bound)"].replace(",", ""))
    every = float(shown["from here up, every base passes"].replace(",", ""))
    distances = np.arange(8193)
    assert (margin(128, first, distances) >= 0).all() and 8.2e4 < first < 8.6e4  # Men et al., Fig. 1
    assert every > 3 * first and (margin(128, every, distances) >= 0).all()
    step = 10 ** (1 / 500)  # the page's grid
    assert (margin(128, first / step, distances) < 0).any() and (margin(128, every / step, distances) < 0).any()
    assert int(shown["bases above the first crossing that fail"]) > 0  # the pattern is not monotone
    sweep = numbers(at, 2)
    failing = sweep[(sweep["passes"] == "no") & (sweep["base"] > first)]
    assert len(failing) == int(shown["bases above the first crossing that fail"])
    assert all((margin(128, b, distances) < 0).any() for b in failing["base"].iloc[::10])
    at.select_slider(key="base-length").set_value(32_768).run()
    assert not at.exception and not any(name.startswith("first base that passes") for name in metrics(at))
    assert any("computed here up to L = 16K" in caption.value for caption in at.caption)
    assert chart_titles(at)[1].endswith("up to m = 32,768")


def test_at_16k_code_llamas_base_passes_between_the_two_numbers(lesson_page):
    at = lesson_page(LESSON)
    at.select_slider(key="base-length").set_value(16_384).run()
    at.selectbox(key="base-b").set_value(1_000_000).run()
    shown = metrics(at)
    assert not at.exception and shown["first distance with B(m) < 0, for this base"] == "none up to L"
    assert (margin(128, 1e6, np.arange(16_385)) >= 0).all()
    first = float(shown["first base that passes up to 16K (Men et al.'s bound)"].replace(",", ""))
    every = float(shown["from here up, every base passes"].replace(",", ""))
    assert first < 1e6 < every


def test_configuration_table_names_llama_31_and_32_scaling_and_every_source(lesson_page):
    at = lesson_page(LESSON)
    table = at.table[0].value
    assert (
        "factor 8," in table.loc["Llama 3.1 8B", "rope_scaling"] and table.loc["Llama 3 8B", "rope_scaling"] == "none"
    )
    assert "factor 32," in table.loc["Llama 3.2 1B / 3B", "rope_scaling"]
    assert table.loc["Llama 2 7B", "rope_theta"] == "10,000"
    sources = at.table[1].value
    assert list(sources.index) == list(table.index) and sources.loc["Phi-4", "checked against"] == "unchecked"
    assert sources.loc["Llama 3.1 8B", "config.json of"].replace("\u200b", "") == "meta-llama/Llama-3.1-8B"
