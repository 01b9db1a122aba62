"""Extrapolation lab: summary by hand, a reading that follows the data, the chart, and the page."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from poslab.experiments import extrapolation as experiment
from poslab.experiments.results import ExtrapolationResults, Measurement, RunRecord, load_results
from poslab.lessons import get_lesson
from poslab.viz import extrapolation as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import button

LENGTHS = (64, 128, 256, 512)


def make_results(table: dict[str, list[list[float | None]]]) -> ExtrapolationResults:
    """``{encoding: [[seed 0 accuracy per length], [seed 1 ...]]}``; None means cannot run."""
    rows = [Measurement(encoding, seed, 64, length, accuracy, "ok" if accuracy is not None else "cannot_run")
            for encoding, seeds in table.items() for seed, accuracies in enumerate(seeds)
            for length, accuracy in zip(LENGTHS, accuracies)]
    record = RunRecord("python -m poslab.experiments.extrapolation --out x.csv", "full",
                       tuple(range(max(len(s) for s in table.values()))), {
                           "encodings": list(table), "steps": 800, "batch_size": 16, "train_len": 64,
                           "vocab_size": 16, "n_layers": 2, "d_model": 64}, "task", 1 / 16,
                       {"torch": "x"}, 600.0, 40.0, 30.0, "2026-01-01T00:00:00+00:00")
    return ExtrapolationResults(tuple(rows), record)


PAPER_LIKE = make_results({
    "none": [[0.30, 0.25, 0.2, 0.15], [0.34, 0.27, 0.2, 0.13]],
    "sinusoidal": [[0.95, 0.55, 0.30, 0.17], [0.97, 0.53, 0.28, 0.16]],
    "learned": [[0.85, None, None, None], [0.83, None, None, None]],
    "rope": [[0.99, 0.96, 0.55, 0.31], [1.00, 0.97, 0.60, 0.33]],
    "alibi": [[0.91, 0.88, 0.85, 0.84], [0.90, 0.86, 0.84, 0.82]],
})
ROPE_WINS = make_results({
    "sinusoidal": [[0.95, 0.55, 0.30, 0.17]],
    "learned": [[0.85, None, None, None]],
    "rope": [[0.99, 0.98, 0.97, 0.96]],
    "alibi": [[0.60, 0.50, 0.45, 0.40]],
})
ALIBI_MISSES = make_results({
    "rope": [[0.99, 0.98, 0.90, 0.80]],
    "alibi": [[0.20, 0.20, 0.20, 0.20]],
})


def test_summary_is_mean_and_range_over_seeds_by_hand():
    cells = {(c.encoding, c.eval_len): c for c in lesson.summarize(PAPER_LIKE.measurements)}
    alibi = cells[("alibi", 512)]
    assert alibi.mean == pytest.approx(0.83) and (alibi.low, alibi.high, alibi.n_seeds) == (0.82, 0.84, 2)
    assert not cells[("learned", 128)].can_run and cells[("learned", 64)].mean == pytest.approx(0.84)
    assert [c.encoding for c in lesson.summarize(PAPER_LIKE.measurements)][::4] == [
        "none", "sinusoidal", "learned", "rope", "alibi"]


def test_reading_of_a_paper_like_result():
    text = lesson.reading(PAPER_LIKE)
    assert ("the task was learned (at least 50% right; chance is 6%) by RoPE (100%), sinusoidal (96%), "
            "ALiBi (90%) and learned (84%); not by NoPE (32%).") in text
    assert "At 512 tokens (8x the training length) ALiBi held up best** with 83% (seeds 82%-84%)" in text
    assert "RoPE came next with 32%." in text
    assert ("**Failed past the training length:** NoPE (32% to 14%), sinusoidal (96% to 16%), "
            "RoPE (100% to 32%)") in text  # NoPE learned partly (above twice chance), so it is judged too
    assert "**Held up:** ALiBi (90% to 83%) kept at least 90% of its margin" in text
    assert "**learned cannot run** at 128 tokens or more" in text
    assert "As in the ALiBi paper's figure" in text and "One seed" not in text


def test_reading_follows_the_data_when_the_paper_is_not_reproduced():
    text = lesson.reading(ROPE_WINS)
    assert "RoPE held up best** with 96%" in text and "Unlike the ALiBi paper's figure" in text
    assert "(96% against ALiBi's 40%)" in text
    assert "**Faded:** ALiBi (60% to 40%)" in text and "One seed per encoding" in text
    missed = lesson.reading(ALIBI_MISSES)
    assert "not by ALiBi (20%)" in missed and "cannot test the ALiBi paper's claim" in missed
    assert "cannot run" not in missed


def test_chart_follows_the_course_conventions_and_keeps_cannot_run_off_the_axis():
    chart = lesson.accuracy_chart(PAPER_LIKE, "t")
    assert convention_problems(chart) == []
    layers = chart.to_dict()["layer"]
    frame = lesson.chart_frame(PAPER_LIKE)
    drawn = frame[frame["status"] == "ok"]
    assert ("learned", 128) not in set(zip(drawn["encoding"], drawn["eval_len"]))  # no number where none exists
    assert set(frame[frame["status"] == "cannot run"]["eval_len"]) == {128, 256, 512}
    labels = [layer for layer in layers if layer.get("mark", {}).get("type") == "text"]
    assert len(labels) == 2  # "learned: cannot run from here on", "chance 6%"
    assert "64 (trained)" in layers[0]["encoding"]["x"]["axis"]["labelExpr"]
    assert layers[1]["encoding"]["y"]["scale"]["domain"] == [0, 1]


def test_table_shows_mean_range_and_cannot_run():
    table = lesson.summary_table(PAPER_LIKE).set_index("encoding")
    assert table.loc["ALiBi", "512 tokens (8x)"] == "83% (82%-84%)"
    assert table.loc["learned", "128 tokens (2x)"] == "cannot run"
    assert lesson.summary_table(ROPE_WINS).set_index("encoding").loc["RoPE", "64 tokens (1x)"] == "99%"


def test_quick_estimate_comes_from_the_measured_cpu_time():
    estimate = lesson.quick_estimate(PAPER_LIKE)  # 30 ms CPU per step
    steps = len(experiment.QUICK.encodings) * experiment.QUICK.steps
    assert f"about {steps * 30 / 1000:.0f} s" in estimate and "30 ms of CPU" in estimate


def test_lesson_has_text_and_predict_before_reveal_checks():
    extrapolation = get_lesson("extrapolation")
    assert {"intro", "task", "method", "live", "why"} <= set(extrapolation.text)
    assert 2 <= len(extrapolation.checks) <= 3
    for check in extrapolation.checks:
        assert all(option.feedback for option in check.options) and len(check.options) >= 3


# ---------------------------------------------------------------- the page


def test_page_shows_the_shipped_results_and_their_reading(lesson_page):
    at = lesson_page("extrapolation")
    shipped = load_results(experiment.SHIPPED_CSV)
    markdown = [block.value for block in at.markdown]
    assert lesson.reading(shipped) in markdown  # the words on the page are the ones the data gives
    assert any("held up best" in block or "no encoding learned" in block for block in markdown)
    assert len(at.get("vega_lite_chart")) == 1 and len(at.dataframe) == 1
    assert any(shipped.record.command in caption.value for caption in at.caption)
    assert button(at, "Run the quick mode live") is not None
    assert len(at.get("radio")) == len(get_lesson("extrapolation").checks)


def test_page_live_run_with_a_tiny_config(lesson_page, monkeypatch):
    tiny = replace(experiment.QUICK, train_len=8, steps=2, eval_tokens=256, encodings=("learned", "alibi"))
    monkeypatch.setattr(lesson, "QUICK", tiny)
    at = lesson_page("extrapolation")
    at.number_input(key="extrapolation-seed").set_value(3).run()
    button(at, "Run the quick mode live").click().run()
    assert not at.exception, at.exception
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2 and "seed 3, 2 steps" in str(json.loads(charts[1].proto.spec).get("title"))
    assert any("learned cannot run" in block.value for block in at.markdown)
    at.run()  # a rerun (any widget) keeps the live result without training again
    assert not at.exception and len(at.get("vega_lite_chart")) == 2
