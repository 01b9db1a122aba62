"""The properties of attention the course teaches, on the reference implementation."""

import math

import pytest
import torch

from poslab.encodings import attention, sinusoidal_encoding
from tests.helpers import random_permutation_matrix


def self_attention(x, bias=None):
    return attention(x, x, x, bias=bias)[0]


def loop_attention(q, k, v):
    """Attention for one head written out with Python loops, as an independent check."""
    tq, tk, d = q.shape[0], k.shape[0], q.shape[1]
    out = torch.zeros(tq, v.shape[1], dtype=torch.float64)
    for i in range(tq):
        logits = [float(q[i] @ k[j]) / math.sqrt(d) for j in range(tk)]
        top = max(logits)
        weights = [math.exp(s - top) for s in logits]
        total = sum(weights)
        for j in range(tk):
            out[i] += weights[j] / total * v[j].double()
    return out


def test_matches_the_formula_written_out(generator):
    q, k, v = (torch.randn(5, 4, generator=generator) for _ in range(3))
    out, weights = attention(q, k, v)
    assert torch.allclose(out.double(), loop_attention(q, k, v), atol=1e-6)
    assert torch.allclose(weights.sum(-1), torch.ones(5), atol=1e-6)


def test_cross_attention_shapes(generator):
    q = torch.randn(2, 3, 7, 8, generator=generator)  # (B, H, Tq, D)
    k = torch.randn(2, 3, 5, 8, generator=generator)  # (B, H, Tk, D)
    v = torch.randn(2, 3, 5, 6, generator=generator)  # (B, H, Tk, Dv)
    out, weights = attention(q, k, v)
    assert out.shape == (2, 3, 7, 6) and weights.shape == (2, 3, 7, 5)


@pytest.mark.parametrize("shape", [(6, 8), (3, 6, 8), (2, 4, 6, 8)])
def test_permutation_equivariance(shape, generator):
    x = torch.randn(*shape, generator=generator)
    perm = random_permutation_matrix(shape[-2], generator)
    assert torch.allclose(self_attention(perm @ x), perm @ self_attention(x), atol=1e-5)


def test_mean_pooled_output_is_permutation_invariant(generator):
    x = torch.randn(2, 9, 16, generator=generator)
    perm = random_permutation_matrix(9, generator)
    pooled = self_attention(x).mean(-2)
    assert torch.allclose(self_attention(perm @ x).mean(-2), pooled, atol=1e-5)
    # The unpooled output of a non-trivial permutation does move: equivariant, not invariant.
    assert not torch.allclose(self_attention(perm @ x), self_attention(x), atol=1e-3)


def test_adding_sinusoidal_positions_breaks_equivariance(generator):
    x = torch.randn(8, 16, generator=generator)
    pe = sinusoidal_encoding(8, 16)
    perm = random_permutation_matrix(8, generator)
    gap = (self_attention(perm @ x + pe) - perm @ self_attention(x + pe)).abs().max()
    assert gap > 1e-2


def test_causal_mask_breaks_equivariance(generator):
    x = torch.randn(6, 8, generator=generator)
    mask = torch.full((6, 6), float("-inf")).triu(1)
    perm = random_permutation_matrix(6, generator)
    gap = (self_attention(perm @ x, mask) - perm @ self_attention(x, mask)).abs().max()
    assert gap > 1e-2


def test_minus_infinity_gets_weight_exactly_zero(generator):
    x = torch.randn(2, 5, 4, generator=generator)
    bias = torch.zeros(5, 5)
    bias[:, 3] = float("-inf")
    _, weights = attention(x, x, x, bias=bias)
    assert torch.all(weights[..., 3] == 0.0)


def test_bias_is_added_to_the_scaled_logits(generator):
    q, k, v = (torch.randn(4, 6, generator=generator, dtype=torch.float64) for _ in range(3))
    bias = torch.randn(4, 4, generator=generator, dtype=torch.float64)
    expected = torch.softmax(q @ k.T / math.sqrt(6) + bias, -1) @ v
    assert torch.allclose(attention(q, k, v, bias=bias)[0], expected)


def test_bias_broadcasts_over_batch_and_heads(generator):
    x = torch.randn(2, 3, 5, 4, generator=generator)  # (B, H, T, D)
    per_head = torch.randn(3, 1, 5, generator=generator)  # (H, 1, Tk)
    out, _ = attention(x, x, x, bias=per_head)
    for h in range(3):
        assert torch.allclose(out[:, h], attention(x[:, h], x[:, h], x[:, h], bias=per_head[h])[0], atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_keeps_dtype_and_leaves_inputs_unchanged(dtype, generator):
    q, k, v = (torch.randn(2, 4, 8, generator=generator).to(dtype) for _ in range(3))
    bias = torch.zeros(4, 4)
    copies = [t.clone() for t in (q, k, v, bias)]
    out, weights = attention(q, k, v, bias=bias)
    assert out.dtype == dtype and weights.dtype == dtype
    assert all(torch.equal(a, b) for a, b in zip((q, k, v, bias), copies))


def test_keeps_device():
    q = torch.empty(2, 4, 8, device="meta")
    out, weights = attention(q, q, q, bias=torch.zeros(4, 4, device="meta"))
    assert out.device.type == "meta" and weights.device.type == "meta"


@pytest.mark.parametrize(
    "shapes, bias_shape",
    [(((4, 8), (4, 6), (4, 6)), None), (((4, 8), (4, 8), (5, 8)), None), (((4, 8), (4, 8), (4, 8)), (3, 4))],
)
def test_mismatched_shapes_raise_value_error(shapes, bias_shape):
    q, k, v = (torch.zeros(s) for s in shapes)
    bias = None if bias_shape is None else torch.zeros(bias_shape)
    with pytest.raises(ValueError, match="expected|need|broadcast"):
        attention(q, k, v, bias=bias)
