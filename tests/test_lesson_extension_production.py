"""Extension in production: the cost of a long token by hand, PoSE's positions, the recipes' sources, the page."""

import pytest
import torch

from poslab.viz import production as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import metrics

LESSON = "extension-production"


def cost_by_hand(params: float, layers: int, d_attn: int, length: int) -> float:
    return 2 * params + 2 * layers * length * d_attn


def test_llama_31_8b_token_cost_by_hand():
    # Llama 3.1 8B: 32 layers, 32 heads x 128 = 4,096 (its config.json)
    ratio = cost_by_hand(8e9, 32, 4096, 131_072) / cost_by_hand(8e9, 32, 4096, 8192)
    view = lesson.cost_view("Llama 3.1 8B", 8192, 131_072)
    assert view.cost_ratio == pytest.approx(ratio) and 2.7 < ratio < 2.8
    assert view.attention_share == pytest.approx(2 * 32 * 131_072 * 4096 / cost_by_hand(8e9, 32, 4096, 131_072))
    assert convention_problems(view.chart) == []


def test_pose_positions_keep_the_window_and_reach_the_target():
    generator = torch.Generator().manual_seed(5)
    for _ in range(50):
        positions = lesson.pose_positions(64, 1024, 3, generator)
        assert len(positions) == 64 and positions[0] == 0 and positions.max() < 1024
        steps = positions[1:] - positions[:-1]
        assert (steps >= 1).all() and (steps > 1).sum() <= 2  # at most two skips for three chunks


def test_pose_covers_distances_that_plain_training_never_sees():
    view = lesson.pose_view(64, 1024, 2, 200)
    assert view.plain_coverage == pytest.approx(63 / 1023)
    assert view.pose_coverage > 0.9 and view.largest_position > 900
    assert lesson.covered_distances(torch.tensor([0, 1, 5])).sort().values.tolist() == [1, 4, 5]
    assert convention_problems(view.chart) == []


def test_every_recipe_names_its_source():
    table = lesson.recipes_table()
    assert {"Position interpolation", "YaRN", "PoSE", "Llama 3.1"} <= set(table["recipe"])
    assert table["source"].str.contains("arXiv").all()


def test_page_computes_the_cost_and_the_coverage(lesson_page):
    at = lesson_page(LESSON)
    shown = metrics(at)
    assert not at.exception
    ratio = cost_by_hand(8e9, 32, 4096, 131_072) / cost_by_hand(8e9, 32, 4096, 8192)
    assert shown["cost of a long token, against a short one"] == f"{ratio:.2f}×"
    assert shown["plain window: distances trained"] == f"{63 / 1023:.1%}"
    assert float(shown["PoSE: distances trained"].rstrip("%")) > 50
    at.selectbox(key="ep-model").set_value("Qwen3 8B").run()
    ratio = cost_by_hand(8e9, 36, 32 * 128, 131_072) / cost_by_hand(8e9, 36, 32 * 128, 8192)  # 36 layers
    assert not at.exception and metrics(at)["cost of a long token, against a short one"] == f"{ratio:.2f}×"
    at.slider(key="ep-examples").set_value(1).run()
    assert float(metrics(at)["PoSE: distances trained"].rstrip("%")) < 15
    assert at.table[0].value.loc["Llama 3.1", "source"].startswith("The Llama 3 Herd")
