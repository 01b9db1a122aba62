"""Positions in real engines: context shift against a recompute, Phi-3's switch, dynamic NTK, KV memory, the page."""

import pytest

from poslab.model_configs import model_config
from poslab.viz import engine_practice as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import metrics

ROUNDING = 1e-12


@pytest.mark.parametrize(("keep", "discard"), [(4, 8), (1, 3)])
def test_a_shift_moves_the_first_layer_exactly_and_is_not_a_recompute_above(keep, discard):
    errors = lesson.context_shift(20, keep, discard)
    assert errors[0] < ROUNDING and min(errors[1:]) > 1e-3


def test_phi3_switch_rerotating_the_cache_is_exact_and_keeping_it_drifts_past_l():
    errors = lesson.phi3_switch(18, 10)
    fixed, kept = (errors[name] for name in lesson.PHI3_RULES)
    assert max(fixed) < ROUNDING
    assert max(kept[:10]) < ROUNDING and min(kept[10:]) > 1e-4  # step 10 is the first past L = 10


def test_dynamic_bases_hf_grows_past_l_and_vllm_is_fixed_at_s_l():
    frame = lesson.dynamic_bases(4096, 2.0).pivot(index="length", columns="engine", values="base")
    hf, vllm = frame.iloc[:, 0], frame.iloc[:, 1]
    assert (hf[hf.index <= 4096] == 10_000.0).all() and hf[8192] == pytest.approx(vllm[8192])
    assert vllm.nunique() == 1 and vllm.iloc[0] == pytest.approx(10_000.0 * 3 ** (128 / 126))  # s^2 - s + 1 = 3


def test_kv_memory_by_hand():
    table = lesson.kv_memory_table(32_768).set_index("model")
    llama3 = model_config("Llama 3 8B")  # 8 KV heads x 128 x 32 layers x 2 (k, v) x 2 bytes = 128 KiB
    assert (llama3.num_key_value_heads, llama3.head_dim, llama3.num_hidden_layers) == (8, 128, 32)
    assert table.loc["Llama 3 8B", "KiB per token"] == "128" and table.loc["Llama 3 8B", "GiB at 32,768"] == "4.0"
    assert table.loc["Llama 2 7B", "KiB per token"] == "512"  # 32 KV heads: no grouping


def test_charts_follow_the_conventions():
    for chart in (
        lesson.shift_chart(lesson.context_shift(12, 2, 3), 2, 3),
        lesson.dynamic_chart(lesson.dynamic_bases(4096, 4.0), 4096, 4.0),
        lesson.phi3_view(12, 6).chart,
    ):
        assert convention_problems(chart) == [] and len(chart.to_dict()["description"]) > 40


def test_page_shows_the_shift_and_the_switch(lesson_page):
    at = lesson_page("engines-in-practice")
    assert not at.exception
    shown = metrics(at)
    assert float(shown["layer 0: shifted vs recomputed keys"]) < ROUNDING
    assert float(shown["upper layers: largest difference"]) > 1e-3
    captions = [c.value for c in at.caption if "First step that goes wrong" in c.value]
    assert captions[0].endswith("none.") and captions[1].endswith("goes wrong: 10.")  # L = 10
    at.slider(key="ep-original").set_value(14).run()
    assert not at.exception and [c.value for c in at.caption if "goes wrong" in c.value][1].endswith("14.")
    assert len(at.table) == 1 and "Llama 3 8B" in at.table[0].value.index
