"""Public tests for learned.py: the parameter, the forward pass, the length limit."""

import pytest
import torch


def test_exactly_one_trainable_table(impl):
    module = impl.LearnedPositionalEmbedding(max_len=16, d_model=4)
    parameters = list(module.parameters())
    assert len(parameters) == 1
    assert parameters[0].shape == (16, 4)
    assert parameters[0].requires_grad


def test_forward_adds_the_first_rows(impl):
    module = impl.LearnedPositionalEmbedding(max_len=16, d_model=4)
    table = next(module.parameters())
    x = torch.randn(2, 5, 4)
    out = module(x)
    assert out.shape == (2, 5, 4)
    assert torch.allclose(out, x + table[:5].detach())


def test_longer_than_max_len_raises_value_error(impl):
    module = impl.LearnedPositionalEmbedding(max_len=4, d_model=3)
    with pytest.raises((ValueError, IndexError)):  # the spec accepts either, from an explicit check
        module(torch.randn(1, 5, 3))
