"""Public tests for extend.py: frequencies you can work out by hand.

Set-up for most: D = 8 and base 10^4, so the default frequencies are theta = (1, 0.1, 0.01, 0.001);
factor s = 4; trained length L = 64.
"""

import math

import pytest
import torch

THETA = [1.0, 0.1, 0.01, 0.001]


def scaling(rope_type, **keys):
    return {"rope_type": rope_type, "factor": 4.0, "original_max_position_embeddings": 64, **keys}


def assert_frequencies(inv_freq, expected):
    assert isinstance(inv_freq, torch.Tensor) and inv_freq.dtype == torch.float32 and inv_freq.shape == (4,)
    assert torch.allclose(inv_freq.double(), torch.tensor(expected, dtype=torch.float64), rtol=1e-5)


def test_default_frequencies_and_factor(impl):
    inv_freq, attention_factor = impl.scaled_inv_freq(8)
    assert_frequencies(inv_freq, THETA)
    assert isinstance(attention_factor, float) and attention_factor == 1.0


def test_linear_divides_every_frequency(impl):
    inv_freq, attention_factor = impl.scaled_inv_freq(8, scaling=scaling("linear"))
    assert_frequencies(inv_freq, [t / 4 for t in THETA])
    assert attention_factor == 1.0


def test_dynamic_within_and_beyond_the_trained_length(impl):
    inv_freq, _ = impl.scaled_inv_freq(8, scaling=scaling("dynamic"), seq_len=64)
    assert_frequencies(inv_freq, THETA)
    # T = 2L: s T / L - (s - 1) = 5, so theta_i is multiplied by 5^(-2i / (D - 2)).
    inv_freq, _ = impl.scaled_inv_freq(8, scaling=scaling("dynamic"), seq_len=128)
    assert_frequencies(inv_freq, [t * 5 ** (-2 * i / 6) for i, t in enumerate(THETA)])


def test_yarn_ramp_and_attention_factor(impl):
    # d(32) = 8 ln(64 / (64 pi)) / (2 ln 10^4) < 0 -> lo = 0; d(1) = 1.008 -> hi = 2: ramp (0, 0.5, 1, 1).
    inv_freq, attention_factor = impl.scaled_inv_freq(8, scaling=scaling("yarn"))
    assert_frequencies(inv_freq, [1.0, 0.1 * 0.5 + 0.025 * 0.5, 0.01 / 4, 0.001 / 4])
    assert attention_factor == pytest.approx(0.1 * math.log(4) + 1)


def test_llama3_band(impl):
    # Wavelengths 2 pi / theta: 6.3, 62.8, 628, 6283 against L / high = 16 and L / low = 64.
    u = (64 / (2 * math.pi / 0.1) - 1) / (4 - 1)  # pair 1 lies in the band
    inv_freq, attention_factor = impl.scaled_inv_freq(8, scaling=scaling("llama3"))
    assert_frequencies(inv_freq, [1.0, (1 - u) * 0.1 / 4 + u * 0.1, 0.01 / 4, 0.001 / 4])
    assert attention_factor == 1.0


def test_a_factor_of_one_changes_nothing(impl):
    for rope_type in ("linear", "dynamic", "yarn", "llama3"):
        config = {**scaling(rope_type), "factor": 1.0}
        inv_freq, attention_factor = impl.scaled_inv_freq(8, scaling=config)  # dynamic: T = L
        assert_frequencies(inv_freq, THETA)
        assert attention_factor == 1.0, rope_type


def test_unknown_type_raises_and_the_dict_is_kept(impl):
    with pytest.raises(ValueError):
        impl.scaled_inv_freq(8, scaling=scaling("longrope"))
    configs = [
        scaling("yarn", beta_fast=16.0, beta_slow=2.0, attention_factor=1.5),
        scaling("llama3", low_freq_factor=2.0, high_freq_factor=8.0),
        scaling("dynamic"),
    ]
    for config in configs:
        kept = dict(config)
        impl.scaled_inv_freq(8, scaling=config)
        assert config == kept, f"the scaling dict was modified: {kept} became {config}"
