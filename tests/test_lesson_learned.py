"""Learned-embeddings lesson: the tiny fit, the table's similarity, the max_len wall, the page."""

import math

import pytest
import torch

from poslab.encodings.sinusoidal import sinusoidal_encoding
from poslab.fit.learned_table import fit_learned_table, recency_target
from poslab.viz import learned as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import button

SMALL = dict(max_len=24, train_len=16, d_model=8, steps=150, seed=0)


@pytest.fixture(scope="module")
def small_fit():
    return fit_learned_table(**SMALL)


def test_recency_target_by_hand():
    target = recency_target(4, tau=2.0)
    assert torch.allclose(target.sum(-1), torch.ones(4))
    assert target[1, 2:].abs().sum() == 0  # no weight on future keys
    # row 1 has keys 0 and 1 with weights proportional to e^(-1/2) and 1
    assert target[1, 0].item() == pytest.approx(math.exp(-0.5) / (1 + math.exp(-0.5)))


def test_fit_is_deterministic_and_the_seed_matters(small_fit):
    again = fit_learned_table(**SMALL)
    assert torch.equal(small_fit.table, again.table)
    other = fit_learned_table(**{**SMALL, "seed": 1})
    assert not torch.equal(small_fit.table, other.table)


def test_fit_learns_and_leaves_unused_rows_at_their_initialisation(small_fit):
    assert small_fit.losses[-1] < small_fit.losses[0] / 20
    generator = torch.Generator().manual_seed(SMALL["seed"])
    initial = torch.randn(SMALL["max_len"], SMALL["d_model"], generator=generator) * 0.02
    assert torch.equal(small_fit.table[16:], initial[16:])  # never in the loss: never moved
    assert not torch.allclose(small_fit.table[:16], initial[:16])


def test_fit_refuses_a_training_length_past_the_table():
    with pytest.raises(ValueError, match="train_len"):
        fit_learned_table(max_len=8, train_len=9)


def test_cosine_similarity_and_the_sinusoidal_band():
    table = sinusoidal_encoding(32, 8)
    similarity = lesson.cosine_similarity(table)
    assert torch.allclose(similarity.diagonal(), torch.ones(32, dtype=torch.float64))
    # rows have norm sqrt(d/2) = 2, so sim(p, p+1) = sum_i cos(w_i) / 4 for every p
    by_hand = sum(math.cos(10000 ** (-2 * i / 8)) for i in range(4)) / 4
    assert lesson.band_similarity(table, 32, 1) == pytest.approx(by_hand, abs=1e-6)


def test_fit_view_numbers_and_charts():
    view = lesson.fit_view(**SMALL)
    assert view.untrained_row_norm < 0.2 < view.trained_row_norm
    assert view.neighbour_similarity > view.distant_similarity
    charts = [
        view.learned_table,
        view.sinusoidal_table,
        view.learned_similarity,
        view.sinusoidal_similarity,
        view.loss_chart,
    ]
    assert all(convention_problems(chart) == [] for chart in charts)


def test_parameter_count_of_gpt2_small():
    assert lesson.parameter_count(1024, 768) == 786_432


def test_look_up_runs_up_to_max_len_and_shows_the_error_past_it():
    assert lesson.look_up(16, 16).ok
    past = lesson.look_up(16, 17)
    assert not past.ok and "longer than max_len 16" in past.message


# ---------------------------------------------------------------- the page


def test_page_table_size_and_the_max_len_wall(lesson_page):
    at = lesson_page("learned")
    assert at.metric[0].value == "786,432"
    at.select_slider(key="learned-d").set_value(64).run()
    assert not at.exception and at.metric[0].value == f"{1024 * 64:,}"
    # defaults: 40 tokens into 32 rows; the expected refusal is explained, not shown as a failure
    assert not at.error and "longer than max_len 32" in at.info[-1].value
    assert "no row for positions 32 to 39" in at.info[-1].value
    at.slider(key="learned-wall-seq-len").set_value(20).run()
    assert not at.error and "(1, 20, 8)" in at.success[0].value
    at.slider(key="learned-wall-max-len").set_value(16).run()
    assert not at.error and "longer than max_len 16" in at.info[-1].value


def test_page_trains_only_when_asked_and_shows_the_fit(lesson_page):
    at = lesson_page("learned")
    assert at.info and len(at.metric) == 1  # nothing trained yet
    at.slider(key="learned-train-len").set_value(32)
    button(at, "Train (a second or so)").click().run()
    assert not at.exception
    metrics = {metric.label: metric.value for metric in at.metric}
    assert float(metrics["mean row norm, unused rows"]) < 0.2 < float(metrics["mean row norm, trained rows"])
    assert any("train_len = 32" in caption.value for caption in at.caption)
