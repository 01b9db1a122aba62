"""The extend exercise's reference against transformers' own RoPE initialisers (modeling_rope_utils),
for every rope_type over 24 configurations of published models and of the edges."""

from __future__ import annotations

import pytest
import torch

from poslab.encodings import scaled_inv_freq

# (head_dim, base, rope_parameters without rope_theta, seq_len): the published ones first.
CONFIGURATIONS = [
    (
        128,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        None,
    ),  # Llama 3.1
    (
        64,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 32.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        None,
    ),  # Llama 3.2 1B
    (
        128,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 16.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
        },
        None,
    ),  # Llama 4 Scout: a band of no width
    (
        128,
        10000.0,
        {
            "rope_type": "llama3",
            "factor": 4.0,
            "low_freq_factor": 2.0,
            "high_freq_factor": 6.0,
            "original_max_position_embeddings": 2048,
        },
        None,
    ),
    (128, 1000000.0, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, None),  # Qwen2.5
    (128, 10000.0, {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}, None),
    (
        64,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 32.0,
            "original_max_position_embeddings": 2048,
            "beta_fast": 16.0,
            "beta_slow": 2.0,
        },
        None,
    ),
    (
        128,
        500000.0,
        {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192, "attention_factor": 1.0},
        None,
    ),
    (96, 10000.0, {"rope_type": "yarn", "factor": 2.5, "original_max_position_embeddings": 4096}, None),
    (8, 10000.0, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}, None),
    (128, 10000.0, {"rope_type": "linear", "factor": 4.0}, None),
    (64, 500000.0, {"rope_type": "linear", "factor": 2.0}, None),
    (12, 100.0, {"rope_type": "linear", "factor": 8.0}, None),
    (128, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, None),
    (128, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, 2048),
    (128, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, 8192),
    (64, 500000.0, {"rope_type": "dynamic", "factor": 4.0}, 65536),
    (8, 10000.0, {"rope_type": "dynamic", "factor": 4.0}, 128),
    (128, 10000.0, {"rope_type": "dynamic", "factor": 1.0}, 16384),
    (256, 1000000.0, {"rope_type": "dynamic", "factor": 8.0}, 4097),
    (128, 10000.0, {"rope_type": "default"}, None),
    (64, 500000.0, {"rope_type": "default"}, None),
    (6, 2.0, {"rope_type": "default"}, None),
    (256, 1000000.0, {"rope_type": "default"}, None),
]
TRAINED = 4096  # for linear, dynamic and default: max_position_embeddings in transformers' config


def transformers_answer(head_dim, base, parameters, seq_len):
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    trained = parameters.get("original_max_position_embeddings", TRAINED)
    config = LlamaConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=trained,
        rope_parameters={"rope_theta": base, **parameters},
    )
    if parameters["rope_type"] == "default":
        return LlamaRotaryEmbedding.compute_default_rope_parameters(config, device="cpu")
    return ROPE_INIT_FUNCTIONS[parameters["rope_type"]](config, "cpu", seq_len=seq_len)


@pytest.mark.parametrize("head_dim, base, parameters, seq_len", CONFIGURATIONS)
def test_the_reference_agrees_with_transformers(head_dim, base, parameters, seq_len):
    expected, attention = transformers_answer(head_dim, base, parameters, seq_len)
    scaling = {"original_max_position_embeddings": TRAINED, **parameters}
    inv_freq, attention_factor = scaled_inv_freq(head_dim, base, scaling, seq_len)
    assert inv_freq.dtype == torch.float32 and inv_freq.shape == (head_dim // 2,)
    assert torch.allclose(inv_freq.double(), expected.double(), rtol=2e-6, atol=0)
    assert attention_factor == pytest.approx(attention, rel=1e-12)


def test_every_rope_type_is_covered():
    types = {parameters["rope_type"] for _, _, parameters, _ in CONFIGURATIONS}
    assert types == {"default", "linear", "dynamic", "yarn", "llama3"} and len(CONFIGURATIONS) >= 20
