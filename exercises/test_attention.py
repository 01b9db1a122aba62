"""Public tests for attention.py: shapes and a few values you can check by hand.

Run them with ``pytest exercises/``. Passing them is a good sign, not a grade: the grader checks
more (other shapes, masks, dtypes, larger inputs).
"""

import math

import torch


def test_output_shapes(impl):
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 5)
    out, weights = impl.attention(q, k, v)
    assert out.shape == (2, 3, 4, 5)  # [B, H, Tq, Dv]
    assert weights.shape == (2, 3, 4, 6)  # [B, H, Tq, Tk]


def test_each_query_weights_sum_to_one(impl):
    q, k, v = torch.randn(1, 2, 5, 4), torch.randn(1, 2, 7, 4), torch.randn(1, 2, 7, 4)
    _, weights = impl.attention(q, k, v)
    assert torch.allclose(weights.sum(-1), torch.ones(1, 2, 5), atol=1e-5)
    assert bool((weights >= 0).all())


def test_one_query_two_keys_by_hand(impl):
    q = torch.tensor([[1.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    # Logits 1/sqrt(2) and 0, so the first key gets e^(1/sqrt 2) / (e^(1/sqrt 2) + 1).
    first = math.exp(1 / math.sqrt(2)) / (math.exp(1 / math.sqrt(2)) + 1)
    out, weights = impl.attention(q, k, v)
    assert torch.allclose(weights, torch.tensor([[first, 1 - first]]), atol=1e-6)
    assert torch.allclose(out, torch.tensor([[first * 1 + (1 - first) * 3, first * 2 + (1 - first) * 4]]), atol=1e-6)


def test_identical_keys_average_the_values(impl):
    q, v = torch.randn(3, 4), torch.randn(5, 2)
    k = torch.ones(5, 4)  # every key the same: every weight 1/5
    out, weights = impl.attention(q, k, v)
    assert torch.allclose(weights, torch.full((3, 5), 0.2), atol=1e-6)
    assert torch.allclose(out, v.mean(0).expand(3, 2), atol=1e-6)


def test_the_lessons_permutation_demo(impl):
    x = torch.randn(4, 8)
    p = torch.tensor([[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]]).float()
    out, _ = impl.attention(x, x, x)
    out_permuted, _ = impl.attention(p @ x, p @ x, p @ x)
    assert torch.allclose(out_permuted, p @ out, atol=1e-5)


def test_minus_infinity_bias_hides_a_key(impl):
    q, k, v = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2)
    bias = torch.zeros(3, 3)
    bias[:, 2] = float("-inf")
    _, weights = impl.attention(q, k, v, bias=bias)
    assert bool((weights[:, 2] == 0).all())
