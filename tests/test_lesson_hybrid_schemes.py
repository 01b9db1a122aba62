"""Non-uniform and hybrid schemes: LongRoPE against transformers, Gemma 3's layers and cache, Llama 4's chunks."""

import math

import pytest
import torch

from poslab.model_configs import longrope_factors
from poslab.viz import hybrid as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import metrics

LESSON = "hybrid-schemes"


def test_longrope_factors_match_transformers_for_long_inputs():
    from transformers import Phi3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    factors = longrope_factors()
    config = Phi3Config(
        hidden_size=3072,
        num_attention_heads=32,
        max_position_embeddings=131_072,
        original_max_position_embeddings=4096,
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 10_000.0,
            "long_factor": list(factors.long_factor),
            "short_factor": list(factors.short_factor),
            "original_max_position_embeddings": 4096,
        },
    )
    inv_freq, attention = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=8192)
    frame = lesson.longrope_frame()
    ours = 2 * math.pi / torch.tensor(frame["wavelength"].to_numpy()) / torch.tensor(frame["long_factor"].to_numpy())
    assert torch.allclose(ours.float(), inv_freq.float(), rtol=1e-5)
    assert lesson.longrope_view().attention_factor == pytest.approx(attention)
    assert attention == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))


def test_longrope_slow_pairs_are_over_interpolated():
    # wavelength 2 pi 10000^(2i/96) > 4096  <=>  i > 48 log(4096 / 2 pi) / log(10000) = 33.8: pairs 34..47
    view = lesson.longrope_view()
    assert view.slow_pairs == 14 and view.slow_above_one == 0
    assert view.smallest_slow_ratio == pytest.approx(32 / max(longrope_factors().long_factor))
    assert len(longrope_factors().long_factor) == len(longrope_factors().short_factor) == 96 // 2


def test_slow_pairs_are_divided_by_about_twice_s_and_reach_half_their_arc():
    # The lesson's claim: long factors 63 to 65 against s = 32, so the slow pairs reach about half their angle.
    slow = lesson.longrope_frame().query("`slow pair`")
    assert slow["long_factor"].between(63, 65).all()
    assert slow["angle ratio at full length"].between(0.49, 0.51).all()
    assert 32 / 64.84 == pytest.approx(lesson.longrope_view().smallest_slow_ratio, rel=1e-6)


def test_gemma3_layers_and_cache():
    kinds = lesson.gemma3_layers(62)
    assert kinds.count("global") == 10 and kinds[5] == "global" and kinds[:5] == ["local"] * 5
    assert lesson.kv_cache_ratio(131_072, kinds, 1024) == pytest.approx((10 * 131_072 + 52 * 1024) / (62 * 131_072))
    assert lesson.kv_cache_ratio(1024, kinds, 1024) == 1.0  # within the window every layer keeps everything
    view = lesson.gemma_view(131_072)
    # local base 10,000, D = 128: 2 pi 10^(4 i / 64) <= 1024  <=>  i <= 16 log10(1024 / 2 pi) = 35.4
    assert view.local_full_turn_pairs == 36
    # global base 1e6 / 8: 16 pi 10^(6 i / 64) > 131072  <=>  i > 64 log10(131072 / (16 pi)) / 6 = 36.4
    assert view.global_pairs_past_context == 64 - 37


def test_llama4_layers_and_chunked_mask_by_hand():
    kinds = lesson.llama4_layers(48)
    assert kinds.count("NoPE, full attention") == 12 and kinds[3] == "NoPE, full attention"
    mask = lesson.chunked_mask(10, 4)
    for i in range(10):
        for j in range(10):
            assert mask[i, j] == (j <= i and j // 4 == i // 4)
    view = lesson.llama4_view(24, 8)
    assert view.largest_rope_distance == 8191 and view.context == 10_485_760
    for chart in (view.layer_chart, view.chunk_chart, view.sliding_chart):
        assert convention_problems(chart) == []


def test_page_computes_each_scheme(lesson_page):
    at = lesson_page(LESSON)
    shown = metrics(at)
    assert not at.exception
    assert shown["uniform factor s"] == "32"
    assert shown["attention factor"] == f"{math.sqrt(1 + math.log(32) / math.log(4096)):.4f}"
    assert shown["local : global layers"] == "52 : 10"
    assert shown["KV cache vs all global"] == f"{(10 * 131_072 + 52 * 1024) / (62 * 131_072):.1%}"
    assert shown["RoPE : NoPE layers"] == "36 : 12"
    assert shown["max RoPE distance"] == "8,191"
    at.select_slider(key="hy-context").set_value(4096).run()
    assert metrics(at)["KV cache vs all global"] == f"{(10 * 4096 + 52 * 1024) / (62 * 4096):.1%}"
    table = at.table[0].value
    assert (
        "factor 16" in table.loc["Llama 4 Scout", "rope_scaling"]
        and at.table[1].value.loc["Phi-4", "checked against"] == "unchecked"
    )
