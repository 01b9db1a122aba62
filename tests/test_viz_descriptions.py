"""Every chart can be read without seeing it: a title and a Vega-Lite ``description`` (its accessible
name) on every chart the lessons draw, and on every chart builder of ``poslab.viz``.

The lesson pages are visited in one app session, opened once on Home (``visitor``), as a student
clicks from lesson to lesson: a new session per lesson drew Home again each time, and Home is not
what is checked here."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pandas as pd
import pytest

import poslab.viz
from poslab.lessons import all_lessons, get_lesson

# Builders called directly (the pages draw them only with a store's data); every other builder is
# reached through the page that draws it (see LESSON_PAGE_BUILDERS).
RATES = pd.DataFrame(
    {"exercise": ["rope", "alibi"], "test": ["rope: norm", "slopes"], "pass_rate": [0.5, 1.0], "n": [4, 2]}
)
ATTEMPTS = pd.DataFrame(
    {
        "exercise": ["rope", "rope"],
        "fraction": [0.5, 1.0],
        "score": [2.0, 4.0],
        "max_score": [4.0, 4.0],
        "public_tests_only": [False, False],
        "time": pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:05"], utc=True),
    }
)
DIRECT_BUILDERS = {
    "progress.attempts_chart": lambda module: module.attempts_chart(ATTEMPTS, {"rope": "RoPE"}),
    "class_charts.score_distribution_chart": lambda module: module.score_distribution_chart(
        pd.DataFrame({"student": ["a", "b"], "percent": [10.0, 80.0]})
    ),
    "class_charts.pass_rate_chart": lambda module: module.pass_rate_chart(RATES),
}
# Builders drawn by a lesson page at its default settings (a page test below checks each chart there).
LESSON_PAGE_BUILDERS = {
    "alibi.bias_chart",
    "alibi.recency_chart",
    "code_demo.difference_chart",
    "code_demo.permutation_chart",
    "context_extension.angle_ratio_chart",
    "context_extension.wavelength_chart",
    "extrapolation_charts.length_chart",
    "extrapolation_charts.passkey_chart",
    "families.budget_chart",
    "permutation.comparison_charts",
    "permutation.contrast_charts",
    "rope.clock_chart",
    "rope.decay_chart",
    "sinusoidal.waves_chart",
    "relative_bias.bias_matrix_chart",
    "relative_bias.bucket_chart",
    "relative_bias.distance_profile_chart",
    "relative_bias.shaw_chart",
    "rope_base.margin_chart",
    "rope_base.turns_chart",
    "rope_base_bound.bound_chart",
    "long_context.partial_rotary_chart",
    "hybrid.layer_chart",
    "inference_engine.error_chart",
    "engine_practice.dynamic_chart",
    "engine_practice.shift_chart",
    "passkey_charts.distance_chart",
    "passkey_charts.passkey_chart",
}


def chart_builders() -> set[str]:
    """``module.function`` for every public function of poslab.viz named like a chart builder."""
    names = set()
    for info in pkgutil.iter_modules(poslab.viz.__path__):
        module = importlib.import_module(f"poslab.viz.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if (
                function.__module__ == module.__name__
                and not name.startswith("_")
                and name.endswith(("_chart", "_charts"))
            ):
                names.add(f"{info.name}.{name}")
    return names


def description_problems(spec: dict, where: str) -> list[str]:
    problems = []
    if not str(spec.get("title") or "").strip() and not any(
        str(layer.get("title") or "").strip() for layer in spec.get("layer", [])
    ):
        problems.append(f"{where}: no title")
    if len(str(spec.get("description") or "").strip()) < 20:
        problems.append(f"{where}: no description saying what it shows ({spec.get('description')!r})")
    return problems


def test_every_chart_builder_is_checked_somewhere():
    unchecked = chart_builders() - set(DIRECT_BUILDERS) - LESSON_PAGE_BUILDERS
    assert not unchecked, f"chart builders no test checks for a description: {sorted(unchecked)}"


@pytest.mark.parametrize("name", sorted(DIRECT_BUILDERS))
def test_direct_builders_have_a_title_and_a_description(name):
    module = importlib.import_module(f"poslab.viz.{name.split('.')[0]}")
    assert description_problems(DIRECT_BUILDERS[name](module).to_dict(), name) == []


@pytest.fixture(scope="module")
def visitor(tmp_path_factory: pytest.TempPathFactory):
    """One session on Home, for the module; each test's runs use that test's own store (conftest)."""
    from tests.app_harness import open_app  # streamlit is imported only by tests that drive the app

    folder = tmp_path_factory.mktemp("visitor")
    with pytest.MonkeyPatch.context() as monkeypatch:  # this first run's store, as each test's later
        monkeypatch.setenv("POSLAB_DB_URL", f"sqlite:///{folder / 'progress.db'}")
        monkeypatch.setenv("POSLAB_DATA_DIR", str(folder))
        monkeypatch.delenv("POSLAB_INSTRUCTOR_PASSWORD", raising=False)
        return open_app()


@pytest.mark.parametrize("lesson_id", [lesson.id for lesson in all_lessons()])
def test_every_chart_a_lesson_draws_has_a_title_and_a_description(visitor, lesson_id):
    from tests.app_harness import go

    at = go(visitor, get_lesson(lesson_id).page_path)  # a click in the sidebar
    if lesson_id == "learned":  # its fit's five charts appear once trained
        next(button for button in at.button if button.label.startswith("Train")).click().run()
    for skip in [button for button in at.button if button.label.startswith("Skip")]:
        skip.click().run()  # content that answers a prediction check shows once it is skipped
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    assert specs or lesson_id in {"links"}, f"{lesson_id} drew no chart: the check checked nothing"
    problems = [
        problem
        for index, spec in enumerate(specs)
        for problem in description_problems(spec, f"{lesson_id} chart #{index}")
    ]
    assert not problems, "\n".join(problems)


def test_a_chart_without_a_description_is_caught():
    import altair as alt

    bare = alt.Chart(pd.DataFrame({"x": [1]}), title="A title").mark_point().encode(x="x:Q").to_dict()
    assert description_problems(bare, "bare") == ["bare: no description saying what it shows (None)"]
