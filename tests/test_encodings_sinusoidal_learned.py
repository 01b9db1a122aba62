"""Sinusoidal and learned absolute encodings: values, properties, and the limits of a table."""

import math

import pytest
import torch

from poslab.encodings import LearnedPositionalEmbedding, attention, sinusoidal_encoding
from tests.helpers import FLOAT32_EPS, random_permutation_matrix


def test_sinusoidal_values_by_hand():
    table = sinusoidal_encoding(3, 4)
    # Column pair i=1 turns at 10000^(-2/4) = 0.01 rad per position.
    expected = torch.tensor(
        [
            [0.0, 1.0, 0.0, 1.0],
            [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
            [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)],
        ]
    )
    assert table.dtype == torch.float32 and table.device.type == "cpu"
    assert torch.allclose(table, expected, atol=1e-7)


def test_sinusoidal_base_changes_the_frequencies():
    table = sinusoidal_encoding(2, 4, base=100.0)
    assert math.isclose(table[1, 2].item(), math.sin(100.0**-0.5), rel_tol=1e-6)


@pytest.mark.parametrize("max_position", [100, 1000, 100_000])
def test_dot_product_depends_only_on_the_offset(max_position):
    d_model = 64
    table = sinusoidal_encoding(max_position, d_model).double()
    p = torch.arange(0, max_position, max(1, max_position // 200))
    q = p.flip(0)
    freqs = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    # sum_i sin(p w) sin(q w) + cos(p w) cos(q w) = sum_i cos((p - q) w)
    exact = torch.cos((p - q).double()[:, None] * freqs).sum(-1)
    # Each float32 entry is off by at most one unit roundoff: d products of two such entries.
    bound = d_model * 2 * FLOAT32_EPS * 1.01
    assert (table[p] * table[q]).sum(-1).sub(exact).abs().max() <= bound


def test_dot_product_is_even_in_the_offset():
    table = sinusoidal_encoding(50, 32).double()
    assert torch.allclose(table[20] @ table[27], table[27] @ table[20])
    assert torch.allclose(table[20] @ table[27], table[20] @ table[13], atol=1e-6)


def test_long_tables_are_finite_with_distinct_rows():
    table = sinusoidal_encoding(100_000, 64)
    assert torch.isfinite(table).all()
    assert torch.unique(table, dim=0).shape[0] == 100_000


def test_odd_d_model_raises():
    with pytest.raises(ValueError, match="even"):
        sinusoidal_encoding(10, 7)


def test_learned_has_exactly_one_table_parameter():
    module = LearnedPositionalEmbedding(16, 8)
    params = list(module.parameters())
    assert len(params) == 1 and params[0].shape == (16, 8) and params[0].requires_grad


def test_learned_adds_the_first_rows_without_touching_x(generator):
    module = LearnedPositionalEmbedding(16, 8)
    (table,) = module.parameters()
    x = torch.randn(3, 5, 8, generator=generator)
    before = x.clone()
    out = module(x)
    assert torch.equal(x, before)
    assert torch.allclose(out, before + table.detach()[:5])


def test_learned_refuses_sequences_past_max_len():
    module = LearnedPositionalEmbedding(16, 8)
    with pytest.raises(ValueError, match=r"(?=.*\b17\b)(?=.*\b16\b)"):
        module(torch.zeros(1, 17, 8))


def test_learned_follows_dtype_and_device_moves():
    module = LearnedPositionalEmbedding(4, 2).to(torch.float64)
    assert module(torch.zeros(1, 3, 2, dtype=torch.float64)).dtype == torch.float64
    meta = LearnedPositionalEmbedding(4, 2).to("meta")
    assert meta(torch.zeros(1, 3, 2, device="meta")).device.type == "meta"


def test_learned_positions_break_equivariance(generator):
    module = LearnedPositionalEmbedding(8, 16)
    with torch.no_grad():
        module.table.copy_(torch.randn(8, 16, generator=generator))
        x = torch.randn(1, 8, 16, generator=generator)
        perm = random_permutation_matrix(8, generator)
        positioned = module(x)
        permuted = module(perm @ x)
        gap = attention(permuted, permuted, permuted)[0] - perm @ attention(positioned, positioned, positioned)[0]
    assert gap.abs().max() > 1e-2
