"""Three families: parameter counts, the property probes, the comparison table, the chooser page."""

from pathlib import Path

import pytest

from poslab.lessons import get_lesson
from poslab.viz import families
from poslab.viz.common import convention_problems


def test_methods_come_in_lesson_order_and_each_has_its_lesson():
    assert [method.id for method in families.methods()] == ["sinusoidal", "learned", "rope", "relative-bias", "alibi"]
    for method in families.methods():
        assert Path(get_lesson(method.id).page_path).name == f"{method.id.replace('-', '_')}.py"
        assert method.used_by and method.extrapolation


def test_learned_table_costs_max_len_times_width():
    # GPT-2 small: 1024 positions x 768 features = 786,432 parameters (wpe in the released checkpoint)
    assert families.position_budget("learned", 768, 1024, 12).trainable == 786_432


@pytest.mark.parametrize("method_id", ["sinusoidal", "rope", "alibi"])
def test_computed_methods_have_no_trainable_parameters(method_id):
    assert families.position_budget(method_id, 4096, 4096, 32).trainable == 0


def test_t5_bias_costs_32_scalars_per_head_whatever_max_len():
    # T5: 32 buckets x H heads, one table shared by all layers (Raffel et al., 2020, section 2.1)
    assert families.position_budget("relative-bias", 4096, 4096, 32).trainable == 32 * 32
    assert families.position_budget("relative-bias", 4096, 1_000_000, 32).trainable == 32 * 32


def test_stored_constants_follow_the_shapes():
    assert families.position_budget("sinusoidal", 512, 100, 8).fixed == 100 * 512
    assert families.position_budget("rope", 512, 100, 8).fixed == 100 * 64  # cos + sin, d/2 = 32 each
    assert families.position_budget("alibi", 512, 100, 8).fixed == 8


@pytest.mark.parametrize("d_model, n_heads, message", [(4096, 30, "do not divide"), (96, 32, "must be even")])
def test_impossible_sizes_are_explained(d_model, n_heads, message):
    with pytest.raises(ValueError, match=message):
        families.position_budget("rope", d_model, 1024, n_heads)


@pytest.mark.parametrize(
    "method_id, relative",
    [("sinusoidal", False), ("learned", False), ("rope", True), ("relative-bias", True), ("alibi", True)],
)
def test_only_methods_inside_attention_give_distance_only_logits(method_id, relative):
    assert families.depends_only_on_distance(method_id) is relative


def test_rope_logit_of_a_token_with_itself_is_its_norm_at_every_position():
    import torch

    scores = families.probe_scores("rope")
    token = families._constant_token()[0]
    # A rotation keeps lengths, so the diagonal is |x|^2 / sqrt(d) everywhere.
    expected = float(token @ token) / families.PROBE_DIM**0.5
    assert torch.allclose(scores.diagonal(), torch.full((families.PROBE_LEN,), expected, dtype=scores.dtype))


@pytest.mark.parametrize(
    "method_id, runs",
    [("sinusoidal", True), ("learned", False), ("rope", True), ("relative-bias", True), ("alibi", True)],
)
def test_only_the_learned_table_refuses_positions_past_max_len(method_id, runs):
    assert families.runs_past_max_len(method_id) is runs


@pytest.mark.parametrize(
    "method_id, carries",
    [("sinusoidal", True), ("learned", True), ("rope", False), ("relative-bias", False), ("alibi", False)],
)
def test_values_carry_position_only_for_input_encodings(method_id, carries):
    assert families.values_carry_position(method_id) is carries


def test_probes_leave_the_global_random_state_alone():
    import torch

    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    families.values_carry_position("learned")
    assert torch.equal(torch.rand(3), expected)


def test_comparison_table_has_a_column_per_method_and_computed_rows():
    table = families.comparison_table(768, 1024, 12)
    assert list(table.columns) == ["Sinusoidal", "Learned table", "RoPE", "T5 relative bias", "ALiBi"]
    assert table.loc["trainable parameters", "T5 relative bias"] == f"{32 * 12:,}"
    assert table.loc["trainable parameters", "Learned table"] == "786,432"
    # 786,432 / (4 x 768^2 = 2,359,296) = 1/3
    assert table.loc["… as a share of one attention layer (4·D²)", "Learned table"] == "33.3%"
    assert list(table.loc["logits depend only on distance i − j"]) == ["no", "no", "yes", "yes", "yes"]


def test_budget_chart_follows_the_conventions_and_shows_zero_on_symlog():
    chart = families.budget_chart(768, 1024, 12)
    assert convention_problems(chart) == []
    bars = chart.layer[0]
    assert bars.to_dict()["encoding"]["x"]["scale"]["type"] == "symlog"
    data = chart.data  # the layers share one data frame
    learned = data[(data["method"] == "Learned table") & (data["kind"] == "trainable parameters")]
    assert learned["numbers"].item() == 786_432
    # the bar says what it counts in words, not by its colour alone
    assert learned["label"].item() == "786,432 trainable"


def test_lesson_has_three_quick_checks():
    assert len(get_lesson("three-families").checks) == 3


# ---------------------------------------------------------------- the page


def test_the_table_waits_for_the_prediction_it_answers(lesson_page):
    page = lesson_page("three-families")
    assert not page.table
    page.button(key="qc-skip-three-families-learned-size").click().run()
    assert page.table[0].value.loc["trainable parameters", "Learned table"] == "786,432"


def test_page_preset_changes_the_numbers(lesson_page):
    page = lesson_page("three-families")
    page.button(key="qc-skip-three-families-learned-size").click().run()
    assert page.table[0].value.loc["trainable parameters", "Learned table"] == "786,432"
    page.pills(key="tf-preset").set_value("LLaMA-2 7B").run()
    assert page.table[0].value.loc["trainable parameters", "Learned table"] == f"{4096 * 4096:,}"


def test_page_explains_an_impossible_head_count(lesson_page):
    page = lesson_page("three-families")
    page.pills(key="tf-preset").set_value("GPT-2 small").run()
    page.number_input(key="tf-h-GPT-2 small").set_value(10).run()
    assert not page.exception and any("do not divide" in box.value for box in page.error)
    page.number_input(key="tf-h-GPT-2 small").set_value(12).run()
    assert not page.error


def test_page_chooser_jumps_to_the_lesson(lesson_page):
    page = lesson_page("three-families")
    page.segmented_control(key="tf-choice").set_value("alibi").run()
    page.button(key="tf-go").click().run()
    assert not page.exception and page.title[0].value == get_lesson("alibi").title


def test_budget_axis_ticks_are_decades_covering_the_largest_bar():
    spec = families.budget_chart(768, 1024, 12).layer[0].to_dict()
    # the largest bar is the learned table, 786,432 -> ticks up to 10^6
    assert spec["encoding"]["x"]["axis"]["values"] == [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
