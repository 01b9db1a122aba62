"""Each context-extension schedule against values worked out by hand.

Set-up for all: head dim D = 8 and base 10^4, so the default frequencies are theta = (1, 0.1,
0.01, 0.001); scale factor s = 4; training length L = 64.
"""

import math

import pytest
import torch

from poslab.encodings import ROPE_SCHEDULES, apply_rope, apply_rotary, rope_schedule

THETA = [1.0, 0.1, 0.01, 0.001]


def schedule(name, **kwargs):
    return rope_schedule(name, 8, base=10_000.0, factor=4.0, original_len=64, **kwargs)


def assert_frequencies(result, expected):
    assert result.inv_freq.dtype == torch.float32 and result.inv_freq.shape == (4,)
    assert torch.allclose(result.inv_freq.double(), torch.tensor(expected, dtype=torch.float64), rtol=1e-5)


def test_none_is_the_paper_schedule():
    assert_frequencies(schedule("none"), THETA)
    assert schedule("none").attention_scale == 1.0


def test_linear_divides_every_frequency_by_the_factor():
    assert_frequencies(schedule("linear"), [t / 4 for t in THETA])


def test_ntk_scales_the_base():
    # b' = b s^(D/(D-2)) gives theta_i s^(-2i/(D-2)): the highest frequency kept, the lowest divided by s.
    assert_frequencies(schedule("ntk"), [1.0, 0.1 * 4 ** (-1 / 3), 0.01 * 4 ** (-2 / 3), 0.001 / 4])


def test_dynamic_ntk_changes_nothing_within_the_training_length():
    assert_frequencies(schedule("dynamic", current_len=64), THETA)
    assert_frequencies(schedule("dynamic", current_len=10), THETA)


def test_dynamic_ntk_at_twice_the_training_length():
    # Effective factor s T / L - (s - 1) = 4 * 2 - 3 = 5.
    assert_frequencies(schedule("dynamic", current_len=128), [t * 5 ** (-2 * i / 6) for i, t in enumerate(THETA)])


def test_yarn_ramp_and_attention_scale():
    # d(n) = D ln(L / (2 pi n)) / (2 ln b): d(32) = -0.50 -> low = 0; d(1) = 1.008 -> high = 2.
    # Ramp over pairs i = 0..3: (0, 0.5, 1, 1); frequency theta (1 - r) + (theta / s) r.
    expected = [1.0, 0.1 * 0.5 + 0.025 * 0.5, 0.01 / 4, 0.001 / 4]
    result = schedule("yarn")
    assert_frequencies(result, expected)
    assert math.isclose(result.attention_scale, 0.1 * math.log(4) + 1, rel_tol=1e-12)


def test_llama3_with_equal_band_factors_is_a_hard_step_at_the_original_length():
    # Llama 4 Scout's block (factor 16, low = high = 1): pairs slower than L are divided by 16, the rest kept.
    # Wavelengths 2 pi 10^(i / 4) = 6.3, 11.2, 19.9, 35.3 against L = 16: pairs 2 and 3 are slow.
    result = rope_schedule("llama3", 8, 10.0, 16.0, 16, low_freq_factor=1.0, high_freq_factor=1.0)
    expected = [1.0, 10**-0.25, 10**-0.5 / 16, 10**-0.75 / 16]
    assert_frequencies(result, expected)


def test_llama3_bands():
    # Wavelengths 2 pi / theta = 6.3, 62.8, 628, 6283 against L / high = 16 and L / low = 64.
    u = (64 / (2 * math.pi / 0.1) - 1) / (4 - 1)  # the one pair inside the band
    expected = [1.0, (1 - u) * 0.1 / 4 + u * 0.1, 0.01 / 4, 0.001 / 4]
    assert_frequencies(schedule("llama3"), expected)


def test_every_schedule_is_the_default_at_factor_one():
    for name in ROPE_SCHEDULES:
        result = rope_schedule(name, 16, factor=1.0, original_len=128, current_len=128)
        assert torch.allclose(result.inv_freq, rope_schedule("none", 16).inv_freq), name
        assert result.attention_scale == 1.0, name


def test_apply_rope_is_apply_rotary_with_the_default_schedule(generator):
    x = torch.randn(3, 10, 16, generator=generator)
    # The schedule's frequencies are float32; apply_rope's are float64: equal to float32 rounding.
    assert torch.allclose(apply_rope(x), apply_rotary(x, rope_schedule("none", 16).inv_freq), atol=1e-6)


def test_linear_interpolation_maps_long_positions_into_the_trained_range(generator):
    x = torch.randn(1, 16, generator=generator)
    scaled = apply_rotary(x, rope_schedule("linear", 16, factor=4.0).inv_freq, torch.tensor([400]))
    assert torch.allclose(scaled, apply_rope(x, torch.tensor([100])), atol=1e-5)


@pytest.mark.parametrize("kwargs, message", [({"name": "nope"}, "unknown"), ({"factor": 0.5}, "at least 1")])
def test_bad_arguments_raise_value_error(kwargs, message):
    arguments = {"name": "linear", "head_dim": 8, "factor": 2.0} | kwargs
    with pytest.raises(ValueError, match=message):
        rope_schedule(**arguments)


def test_yarn_paper_ramp_is_linear_in_turns():
    # L = 64: pair i makes r_i = 64 theta_i / (2 pi) turns = (10.19, 1.019, 0.1019, 0.0102).
    # gamma = clamp((r - 1) / 31, 0, 1) keeps that share of theta_i, the rest is theta_i / 4.
    turns = [64 * t / (2 * math.pi) for t in THETA]
    gammas = [min(max((r - 1) / 31, 0.0), 1.0) for r in turns]
    expected = [t * g + t / 4 * (1 - g) for t, g in zip(THETA, gammas)]
    assert_frequencies(schedule("yarn_paper"), expected)
    assert schedule("yarn_paper").attention_scale == pytest.approx(0.1 * math.log(4) + 1)


def test_the_two_yarn_ramps_agree_at_the_edges_and_differ_in_between():
    code, paper = (rope_schedule(name, 128, 10_000.0, 16.0, 4096).inv_freq.double() for name in ("yarn", "yarn_paper"))
    assert torch.allclose(code[:2], paper[:2]) and torch.allclose(code[-2:], paper[-2:])  # kept / interpolated
    ratio = torch.maximum(code / paper, paper / code)
    assert 2.5 < float(ratio.max()) < 3.5  # "up to 3x" at s = 16 (jquesnelle/yarn #60)


def _hf_config(rope_parameters: dict):
    from transformers import LlamaConfig

    return LlamaConfig(
        hidden_size=256,
        num_attention_heads=2,
        head_dim=128,
        max_position_embeddings=65_536,
        rope_parameters={"rope_theta": 10_000.0, **rope_parameters},
    )


@pytest.mark.parametrize(
    "name, parameters",
    [
        ("yarn", {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}),
        (
            "llama3",
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        ),
        (  # Llama 4 Scout: both band factors 1, a hard step at wavelength 8,192
            "llama3",
            {
                "rope_type": "llama3",
                "factor": 16.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
            },
        ),
    ],
)
def test_code_ramps_match_transformers(name, parameters):
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    expected, attention = ROPE_INIT_FUNCTIONS[parameters["rope_type"]](_hf_config(parameters), "cpu")
    bands = {key: parameters[key] for key in ("low_freq_factor", "high_freq_factor") if key in parameters}
    ours = rope_schedule(
        name, 128, 10_000.0, parameters["factor"], parameters["original_max_position_embeddings"], **bands
    )
    assert torch.allclose(ours.inv_freq, expected.float(), rtol=1e-5)
    assert ours.attention_scale == pytest.approx(attention)
