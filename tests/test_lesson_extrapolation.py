"""Extrapolation lab: summaries by hand, readings that follow the data (accuracy, perplexity, the
passkey probe), the charts, and the page with its live run."""

from __future__ import annotations

import functools
from dataclasses import replace

import pytest

from poslab.experiments import extrapolation as experiment
from poslab.experiments.result_files import load_results
from poslab.experiments.results import ExtrapolationResults, Measurement, ProbeMeasurement, RunRecord
from poslab.lessons import get_lesson
from poslab.viz import extrapolation as lesson
from poslab.viz import extrapolation_data as data
from poslab.viz.common import convention_problems
from poslab.viz.extrapolation_extension import extension_reading
from poslab.viz.extrapolation_reading import reading
from poslab.viz.passkey_reading import perplexity_reading, probe_reading
from tests.app_harness import button, chart_titles

LENGTHS = (64, 128, 256, 512)
DEPTHS = (0.0, 0.5, 1.0)


def distance(length: int, depth: float) -> int:
    return length - 1 - int(depth * (length - 3) + 0.5)


def make_results(
    table: dict[str, list[list[float | None]]],
    perplexity: dict[str, list[float]] | None = None,
    probes: dict[str, dict[int, list[int]]] | None = None,
    trials: int = 10,
) -> ExtrapolationResults:
    """``{encoding: [[seed 0 accuracy per length], ...]}``, None: cannot run; ``perplexity``: seed 0's per
    length (other seeds get the same); ``probes``: ``{encoding: {length: [retrieved per depth]}}`` (every seed)."""
    seeds = range(max(len(s) for s in table.values()))
    rows = [
        Measurement(
            encoding,
            seed,
            64,
            length,
            accuracy,
            "ok" if accuracy is not None else "cannot_run",
            (perplexity or {}).get(encoding, [None] * 4)[index] if accuracy is not None else None,
        )
        for encoding, per_seed in table.items()
        for seed, accuracies in enumerate(per_seed)
        for index, (length, accuracy) in enumerate(zip(LENGTHS, accuracies))
    ]
    probe_rows = [
        ProbeMeasurement(
            encoding,
            seed,
            64,
            length,
            depth,
            distance(length, depth),
            trials,
            hits,
            "ok" if hits is not None else "cannot_run",
        )
        for encoding, by_length in (probes or {}).items()
        for seed in seeds
        for length, per_depth in by_length.items()
        for depth, hits in zip(DEPTHS, per_depth)
    ]
    config = {
        "encodings": list(table),
        "steps": 800,
        "batch_size": 16,
        "train_len": 64,
        "vocab_size": 16,
        "n_layers": 2,
        "d_model": 64,
        "probe_trials": trials,
        "probe_depths": list(DEPTHS),
        "eval_multiples": [1, 2, 4, 8],
    }
    record = RunRecord(
        "python -m poslab.experiments.extrapolation --out x.csv",
        "full",
        tuple(seeds),
        config,
        "task",
        1 / 16,
        {"torch": "x"},
        600.0,
        40.0,
        30.0,
        "2026-01-01T00:00:00+00:00",
        "passkey" if probes else None,
        1 / 15 if probes else None,
    )
    return ExtrapolationResults(tuple(rows), record, tuple(probe_rows))


PAPER_LIKE = make_results(
    {
        "none": [[0.30, 0.25, 0.2, 0.15], [0.34, 0.27, 0.2, 0.13]],
        "sinusoidal": [[0.95, 0.55, 0.30, 0.17], [0.97, 0.53, 0.28, 0.16]],
        "learned": [[0.85, None, None, None], [0.83, None, None, None]],
        "rope": [[0.99, 0.96, 0.55, 0.31], [1.00, 0.97, 0.60, 0.33]],
        "alibi": [[0.91, 0.88, 0.85, 0.84], [0.90, 0.86, 0.84, 0.82]],
    },
    perplexity={
        "none": [6.0, 9.0, 12.0, 15.0],
        "sinusoidal": [1.1, 40.0, 400.0, 1000.0],
        "learned": [1.2, None, None, None],
        "rope": [1.0, 1.3, 30.0, 250.0],
        "alibi": [1.2, 1.3, 1.4, 1.5],
    },
    # needles found of 10 at depths 0%, 50%, 100%
    probes={
        "none": {64: [3, 3, 7], 512: [6, 1, 1]},
        "rope": {64: [9, 10, 10], 512: [1, 1, 1]},
        "alibi": {64: [4, 9, 10], 512: [1, 1, 10]},
        "learned": {64: [5, 10, 10], 512: [None] * 3},
    },
)
ROPE_WINS = make_results(
    {
        "sinusoidal": [[0.95, 0.55, 0.30, 0.17]],
        "learned": [[0.85, None, None, None]],
        "rope": [[0.99, 0.98, 0.97, 0.96]],
        "alibi": [[0.60, 0.50, 0.45, 0.40]],
    },
    perplexity={
        "sinusoidal": [1.1, 3.0, 9.0, 17.0],
        "learned": [1.2] * 4,
        "rope": [1.0, 1.05, 1.1, 1.2],
        "alibi": [2.0, 2.1, 2.2, 2.3],
    },
    probes={"rope": {64: [10, 10, 10], 512: [9, 8, 10]}, "alibi": {64: [5, 9, 10], 512: [1, 2, 10]}},
)
ALIBI_MISSES = make_results(
    {
        "rope": [[0.99, 0.98, 0.90, 0.80]],
        "alibi": [[0.20, 0.20, 0.20, 0.20]],
    }
)


def test_summary_is_mean_and_range_over_seeds_by_hand():
    cells = {(c.encoding, c.eval_len): c for c in data.summarize(PAPER_LIKE.measurements)}
    alibi = cells[("alibi", 512)]
    assert alibi.mean == pytest.approx(0.83) and (alibi.low, alibi.high, alibi.n_seeds) == (0.82, 0.84, 2)
    assert not cells[("learned", 128)].can_run and cells[("learned", 64)].mean == pytest.approx(0.84)
    assert [c.encoding for c in data.summarize(PAPER_LIKE.measurements)][::4] == [
        "none",
        "sinusoidal",
        "learned",
        "rope",
        "alibi",
    ]
    perplexity = {(c.encoding, c.eval_len): c for c in data.summarize(PAPER_LIKE.measurements, "perplexity")}
    assert perplexity[("rope", 512)].mean == 250.0 and not perplexity[("learned", 256)].can_run


def test_retrieval_is_pooled_into_near_and_far_needles_by_hand():
    reach = data.retrieval_by_reach(PAPER_LIKE.probes, train_len=64, eval_len=512)
    # At 512 tokens the needles are 511, 256 and 2 back: two far (>= 64), one near.
    assert reach["alibi"].far.mean == pytest.approx(2 / 20) and reach["alibi"].near.mean == 1.0
    assert reach["none"].far.mean == pytest.approx(7 / 20) and reach["alibi"].needles_far == 2 * 2 * 10
    assert not reach["learned"].far.can_run
    at_train = data.retrieval_by_reach(PAPER_LIKE.probes, train_len=64, eval_len=64)
    assert at_train["rope"].far is None and at_train["rope"].near.mean == pytest.approx(29 / 30)


def test_reading_of_a_paper_like_result():
    text = reading(PAPER_LIKE)
    assert (
        "the task was learned (at least 50% right; chance is 6%) by RoPE (100%), sinusoidal (96%), "
        "ALiBi (90%) and learned (84%); not by NoPE (32%)."
    ) in text
    assert "At 512 tokens (8x the training length) ALiBi held up best** with 83% (seeds 82%-84%)" in text
    assert "RoPE came next with 32%." in text
    assert (
        "**Failed past the training length:** NoPE (32% to 14%), sinusoidal (96% to 16%), RoPE (100% to 32%)"
    ) in text  # NoPE learned partly (above twice chance), so it is judged too
    assert "**Held up:** ALiBi (90% to 83%) kept at least 90% of its margin" in text
    assert "**learned cannot run** at 128 tokens or more" in text
    assert "As in the ALiBi paper's figure" in text and "One seed" not in text


def test_reading_holds_nope_to_the_length_claim_and_says_it_is_under_trained():
    text = reading(PAPER_LIKE)
    # Margin kept from 64 to 512, (a512 - 1/16) / (a64 - 1/16): NoPE (0.14 - 0.0625) / (0.32 - 0.0625) = 30%;
    # ALiBi (0.83 - .0625) / (0.905 - .0625) = 91%; RoPE (0.32 - .0625) / (0.995 - .0625) = 28%;
    # sinusoidal (0.165 - .0625) / (0.96 - .0625) = 11%.
    assert (
        "From 64 to 512 tokens this NoPE kept 30% of its margin over chance, less than ALiBi, unlike the "
        "papers' finding (ALiBi 91%, RoPE 28%, sinusoidal 11%)."
    ) in text
    assert "about 100M parameters on synthetic reasoning and arithmetic tasks" in text and "Wang et al. (2024" in text
    assert "This toy NoPE is under-trained" in text and "32% at the training length against RoPE's 100%" in text
    nope_wins = make_results({"none": [[0.9, 0.9, 0.9, 0.9]], "rope": [[1.0, 0.5, 0.3, 0.2]]})
    text = reading(nope_wins)
    assert "this NoPE kept 100% of its margin over chance, more than any other encoding, as the papers found" in text
    assert "under-trained" not in text


def test_reading_follows_the_data_when_the_paper_is_not_reproduced():
    text = reading(ROPE_WINS)
    assert "RoPE held up best** with 96%" in text and "Unlike the ALiBi paper's figure" in text
    assert "(96% against ALiBi's 40%)" in text
    assert "**Faded:** ALiBi (60% to 40%)" in text and "One seed per encoding" in text
    missed = reading(ALIBI_MISSES)
    assert "not by ALiBi (20%)" in missed and "cannot test the ALiBi paper's claim" in missed
    assert "cannot run" not in missed


def test_perplexity_reading_by_hand():
    text = perplexity_reading(PAPER_LIKE)
    assert (
        "**Perplexity from 64 to 512 tokens:** ALiBi 1.2 to 1.5, NoPE 6.0 to 15.0, RoPE 1.0 to 250.0, "
        "sinusoidal 1.1 to 1000.0"
    ) in text
    assert "**ALiBi kept the lowest perplexity.**" in text
    assert "RoPE and sinusoidal ended clearly worse than a uniform guess" in text  # NoPE's 15 is under 16
    assert "ended clearly worse" not in perplexity_reading(ROPE_WINS)  # sinusoidal's 17 is within 10% of 16
    assert "has no perplexity" in perplexity_reading(ALIBI_MISSES)


def test_probe_reading_answers_the_question_from_the_data():
    text = probe_reading(PAPER_LIKE)
    assert (
        "**At the training length (64 tokens)** the needles retrieved, over every depth, were: RoPE 97%, "
        "learned 83%, ALiBi 77%, NoPE 43% (a guess gets 7%)."
    ) in text
    # Distances at 64 tokens: 63, 32 and 2 back; 32 = 2 x V or more are rare in training. The shares are
    # computed by hand below (test_share_of_far_gaps...): 63 back 0.0024%, 32 back 5.3% -> "5%".
    assert "inside the training length, but not every one is at a distance the task trained on" in text
    assert "it lies 63 or more back in 0.0024%, 32 or more back in 5% of the answers" in text
    assert "within the gaps seen in training" not in text
    assert (
        "**At 512 tokens, needles 64 or more tokens back** (beyond any gap in training): NoPE 35%, RoPE 10%, ALiBi 10%"
    ) in text
    assert (
        "**Does the encoding that extrapolates in perplexity also retrieve? Not here.** ALiBi has the lowest "
        "perplexity (1.5 at 512 tokens), yet it found only 10% of the needles 64 or more tokens back"
    ) in text
    assert "against 100% of those within reach" in text and "Press et al. (2022) and Chi et al. (2023)" in text
    # NoPE's 35% against ALiBi's 10% over 40 far needles each: 25 points, more than two standard errors of a
    # difference, sqrt(2) / sqrt(40) = 22 points.
    assert "The best at far needles was NoPE (35%)" in text
    # At 512 tokens, depth 0 against the middle (depth 50%): NoPE 60% against 10%, a lead; RoPE 10% against
    # 10% and ALiBi 10% against 10%, none: the start helps what sees absolute position, not RoPE.
    assert (
        "**The very start stands out for some encodings** at 512 tokens: a needle at depth 0 (the key at position "
        "0, its value at 1) was found more often than one in the middle by NoPE 60% against 10%; no lead beyond the "
        "noise for RoPE 10% against 10% and ALiBi 10% against 10%."
    ) in text
    assert "RoPE sees only the offset between query and key" in text and "lost in the middle" not in text
    # 20 needles per cell (10 per seed, 2 seeds): two standard errors at most 1 / sqrt(20) = 22 points.
    assert "learned cannot run at 512 tokens" in text and "uncertain by up to ±22 points" in text
    rope = probe_reading(ROPE_WINS)
    assert "**Does the encoding that extrapolates in perplexity also retrieve? Here, yes.** RoPE" in rope
    assert "found 85% of the far needles, against 100% of the near ones" in rope
    assert "has no passkey probe" in probe_reading(ALIBI_MISSES)


def test_probe_reading_says_when_the_run_cannot_answer():
    untrained = make_results(
        {"rope": [[0.1] * 4], "alibi": [[0.1] * 4]},
        perplexity={"rope": [15.0, 15.5, 16.0, 16.0], "alibi": [14.0] * 4},
        probes={"rope": {64: [1, 1, 1], 512: [1, 0, 1]}, "alibi": {64: [1, 1, 1], 512: [1, 1, 1]}},
    )
    text = probe_reading(untrained)
    assert (
        "**Does the encoding that extrapolates in perplexity also retrieve? This run cannot say.** ALiBi has "
        "the lowest perplexity (14.0 at 512 tokens), but it found 10% of even the nearest needles"
    ) in text


def test_charts_follow_the_course_conventions_and_keep_cannot_run_off_the_axis():
    view = lesson.view(PAPER_LIKE, "t")
    for chart in [view.accuracy_chart, view.perplexity_chart, *view.passkey_charts.values()]:
        assert convention_problems(chart) == []
    assert sorted(view.passkey_charts) == [64, 512]
    layers = view.accuracy_chart.to_dict()["layer"]
    frame = data.chart_frame(PAPER_LIKE)
    drawn = frame[frame["status"] == "ok"]
    assert ("learned", 128) not in set(zip(drawn["encoding"], drawn["eval_len"]))  # no number where none exists
    assert set(frame[frame["status"] == "cannot run"]["eval_len"]) == {128, 256, 512}
    labels = [layer for layer in layers if layer.get("mark", {}).get("type") == "text"]
    assert len(labels) == 2  # "learned: cannot run from here on", "chance 6%"
    assert "64 (trained)" in layers[0]["encoding"]["x"]["axis"]["labelExpr"]
    assert layers[1]["encoding"]["y"]["scale"]["domain"] == [0, 1]
    perplexity = view.perplexity_chart.to_dict()["layer"]
    assert perplexity[1]["encoding"]["y"]["scale"] == {"type": "log", "domain": [1, 1250.0]}  # 1000 x 1.25
    passkey = view.passkey_charts[512].to_dict()
    assert passkey["title"]["text"] == "t: passkey retrieval at 512 tokens"
    assert passkey["title"]["offset"] > 0 and passkey["padding"]["top"] > 0  # room for a title of two lines
    # The shaded needles: the key at position 512 - 1 - 64 = 447 or before, depth 447 / (512 - 3) = 0.878.
    shaded = [layer for layer in passkey["layer"] if layer.get("mark", {}).get("type") == "rect"]
    assert len(shaded) == 1
    assert passkey["datasets"][shaded[0]["data"]["name"]][0]["depth_end"] == pytest.approx(447 / 509)
    at_train = view.passkey_charts[64].to_dict()["layer"]
    assert not any(layer.get("mark", {}).get("type") == "rect" for layer in at_train)
    label = passkey["layer"][0]["encoding"]["x"]["axis"]["labelExpr"]
    assert "(511 - floor(datum.value * 509 + 0.5)) + ' back'" in label
    assert "ALiBi: 100% at 2 back, 10% at 256 back, 10% at 511 back" in passkey["description"]
    assert "learned: cannot run" in passkey["description"]


def test_tables_show_mean_range_and_cannot_run():
    table = data.summary_table(PAPER_LIKE).set_index("encoding")
    assert table.loc["ALiBi", "512 tokens (8x)"] == "83% (82%-84%)"
    assert table.loc["learned", "128 tokens (2x)"] == "cannot run"
    assert data.summary_table(ROPE_WINS).set_index("encoding").loc["RoPE", "64 tokens (1x)"] == "99%"
    perplexity = data.summary_table(PAPER_LIKE, "perplexity").set_index("encoding")
    assert perplexity.loc["RoPE", "512 tokens (8x)"] == "250" and perplexity.loc["NoPE", "128 tokens (2x)"] == "9.0"
    assert perplexity.loc["learned", "128 tokens (2x)"] == "cannot run"
    unmeasured = data.summary_table(ALIBI_MISSES, "perplexity").set_index("encoding")
    assert unmeasured.loc["RoPE", "64 tokens (1x)"] == "not measured"
    probes = data.probe_table(PAPER_LIKE).set_index(["encoding", "needle depth"])
    assert probes.loc[("ALiBi", "100%"), "512 tokens (8x)"] == "100%, 2 back"
    assert probes.loc[("NoPE", "0%"), "512 tokens (8x)"] == "60%, 511 back"
    assert probes.loc[("learned", "50%"), "512 tokens (8x)"] == "cannot run"


def test_provenance_says_where_the_numbers_come_from():
    text = lesson.view(PAPER_LIKE, "t").provenance
    assert text.startswith(
        "Full run: `python -m poslab.experiments.extrapolation --out x.csv`; 5 encodings x seeds 0, 1"
    )
    assert (
        "Passkey probe: 10 needles per seed at each of 3 depths and 4 lengths." in text and "load average" not in text
    )
    busy = replace(
        PAPER_LIKE.record,
        cores=2,
        load_average=15.2,
        command="python -m poslab.experiments.extrapolation --out /srv/x/r.csv",
    )
    shown = lesson.provenance(ExtrapolationResults(PAPER_LIKE.measurements, busy))
    assert "`python -m poslab.experiments.extrapolation --out r.csv`" in shown and "/srv" not in shown
    assert "load average" not in shown and "15.2" not in shown  # the server's business, not the student's


def test_lesson_has_text_and_predict_before_reveal_checks():
    extrapolation = get_lesson("extrapolation")
    assert {"intro", "task", "method", "perplexity", "probe", "live", "why"} <= set(extrapolation.text)
    assert {"perplexity-says-retrieval", "passkey-filler"} <= {check.id for check in extrapolation.checks}
    for check in extrapolation.checks:
        assert all(option.feedback for option in check.options) and len(check.options) >= 3
        assert sum(option.correct for option in check.options) == 1


def test_lesson_text_names_lessons_instead_of_pointing_at_neighbours():
    text = " ".join(get_lesson("extrapolation").text.values()).lower()
    for positional in ("previous lesson", "next lesson", "lessons so far", "last lesson"):
        assert positional not in text
    assert "*context extension: 4k to 1m*" in text  # the title in poslab/content/course.toml


# ---------------------------------------------------------------- the page


def test_page_shows_the_shipped_results_and_their_readings(lesson_page):
    from poslab.viz.passkey_reading import perplexity_reading as shipped_perplexity

    at = lesson_page("extrapolation")
    shipped = load_results(experiment.SHIPPED_CSV)
    markdown = [block.value for block in at.markdown]
    assert reading(shipped) in markdown and shipped_perplexity(shipped) in markdown
    assert len(at.get("vega_lite_chart")) == 2 and len(at.table) == 2  # accuracy, perplexity
    assert probe_reading(shipped) not in markdown  # the probe waits for the prediction
    assert any(lesson.shown_command(shipped.record.command) in caption.value for caption in at.caption)
    assert not any("load average" in caption.value or "/tmp/" in caption.value for caption in at.caption)
    assert button(at, "Run the quick mode live") is not None
    assert any("No quick run has finished on this server yet" in caption.value for caption in at.caption)
    button(at, "Skip: show me").click().run()
    assert not at.exception, at.exception
    markdown = [block.value for block in at.markdown]
    assert probe_reading(shipped) in markdown and extension_reading(shipped) in markdown
    charts = at.get("vega_lite_chart")
    assert len(charts) == 4 and "passkey retrieval at 512 tokens" in chart_titles(at)[2]
    assert "RoPE's passkey retrieval by distance" in chart_titles(at)[3]
    with_arms = any(p.encoding == "rope+yarn" for p in shipped.probes)
    assert len(at.table) == 3 + 2 * with_arms  # the probe's; effective lengths and their scores
    at.select_slider(key="extrapolation-probe-length-shipped").set_value(128).run()
    assert "passkey retrieval at 128 tokens" in chart_titles(at)[2]
    at.selectbox(key="extrapolation-distance-arm-shipped").set_value("ALiBi").run()
    assert "ALiBi's passkey retrieval by distance" in chart_titles(at)[3]


def test_page_live_run_in_a_child_process(lesson_page, monkeypatch):
    # One cheap model: learned runs only at the training length (the arms are tested in test_extrapolation_extension).
    shortened = functools.partial(lesson.quick_run_view, steps=2, encodings=("learned",))
    monkeypatch.setattr(lesson, "quick_run_view", shortened)
    at = lesson_page("extrapolation")
    at.number_input(key="extrapolation-seed").set_value(3).run()
    button(at, "Run the quick mode live").click().run()
    assert not at.exception, at.exception
    charts = at.get("vega_lite_chart")
    titles = chart_titles(at)
    assert {"Your quick run (seed 3, 2 steps): accuracy", "Your quick run (seed 3, 2 steps): perplexity"} <= set(titles)
    assert "Your quick run (seed 3, 2 steps): passkey retrieval at 512 tokens" in titles
    assert "Your quick run (seed 3, 2 steps): learned's passkey retrieval by distance" in titles  # the first arm
    assert any("learned cannot run" in block.value for block in at.markdown)
    assert any(caption.value.startswith("Your quick run took") for caption in at.caption)
    at.run()  # a rerun (any widget) keeps the live result without training again
    assert not at.exception and len(at.get("vega_lite_chart")) == len(charts)
    assert any("The last quick run on this server took" in caption.value for caption in at.caption)
