"""Public tests for decode.py: shapes, and properties of decoding you can check without an oracle.

Each one compares your decode with itself (step by step against one pass, one cache mode against
the other, padded against unpadded) or with a value worked out by hand.
"""

import math

import torch


def projections(batch=2, heads=3, length=7, dim=8, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, heads, length, dim, generator=gen, dtype=dtype) for _ in range(3))


def test_shapes_and_dtype(impl):
    q, k, v = projections()
    out, cached_keys = impl.decode(q, k, v, 3)
    assert out.shape == (2, 3, 7, 8) and cached_keys.shape == (2, 3, 7, 8)
    assert impl.decode(q, k, v, 3, window=4)[1].shape == (2, 3, 4, 8)  # a rolling buffer of 4 keys
    assert impl.decode(q, k, v, 3, window=10)[1].shape == (2, 3, 7, 8)
    out, cached_keys = impl.decode(q.double(), k.double(), v.double(), 3)
    assert out.dtype == cached_keys.dtype == torch.float64


def test_one_token_gets_its_own_value(impl):
    q, k, v = projections(length=1)
    out, cached_keys = impl.decode(q, k, v, 1)
    assert torch.allclose(out, v, atol=1e-6)  # one key: weight 1
    assert torch.allclose(cached_keys, k, atol=1e-6)  # position 0 rotates nothing


def test_by_hand_with_one_feature_pair(impl):
    # D = 2: theta_0 = 1. Token 1's query (1, 0) at position 1 against token 0's key (1, 0) at
    # position 0: <R(1) q, R(0) k> = cos(1). Token 1's key is 0, so its score is 0.
    q = torch.tensor([[0.0, 0.0], [1.0, 0.0]]).view(1, 1, 2, 2)
    k = torch.tensor([[1.0, 0.0], [0.0, 0.0]]).view(1, 1, 2, 2)
    v = torch.tensor([[1.0, 0.0], [0.0, 1.0]]).view(1, 1, 2, 2)
    first = math.exp(math.cos(1) / math.sqrt(2)) / (math.exp(math.cos(1) / math.sqrt(2)) + 1)
    for pairing in ("interleaved", "half"):
        out, _ = impl.decode(q, k, v, 1, pairing=pairing)
        assert torch.allclose(out[0, 0, 1], torch.tensor([first, 1 - first]), atol=1e-6), pairing


def test_step_by_step_gives_the_one_pass_forward(impl):
    q, k, v = projections(length=6)
    one_pass, _ = impl.decode(q, k, v, 6)  # every token in the prefill
    for prompt_len in (1, 3, 5):
        out, _ = impl.decode(q, k, v, prompt_len)
        assert torch.allclose(out, one_pass, atol=1e-5), f"prompt_len={prompt_len}"


def test_both_cache_modes_agree_and_cache_what_they_say(impl):
    q, k, v = projections()
    rotated_out, rotated_keys = impl.decode(q, k, v, 2, cache="rotated")
    raw_out, raw_keys = impl.decode(q, k, v, 2, cache="raw")
    assert torch.allclose(raw_out, rotated_out, atol=1e-5)
    assert torch.allclose(raw_keys, k, atol=1e-6)  # raw keys, as given
    assert torch.allclose(rotated_keys[..., 0, :], k[..., 0, :], atol=1e-6)  # position 0
    assert not torch.allclose(rotated_keys[..., 1:, :], k[..., 1:, :], atol=1e-3)  # later keys are turned


def test_a_window_of_one_sees_only_the_token_itself(impl):
    q, k, v = projections()
    for cache in ("rotated", "raw"):
        out, cached_keys = impl.decode(q, k, v, 4, window=1, cache=cache)
        assert torch.allclose(out, v, atol=1e-6), cache
        assert cached_keys.shape == (2, 3, 1, 8)
    assert torch.allclose(impl.decode(q, k, v, 4, window=1, cache="raw")[1], k[..., -1:, :])


def test_shifting_every_position_changes_nothing(impl):
    # RoPE scores depend only on offsets: positions 100, 101, ... give the outputs of 0, 1, ...
    q, k, v = projections(batch=1, length=5)
    shifted = torch.arange(100, 105).view(1, 5)
    assert torch.allclose(impl.decode(q, k, v, 2, position_ids=shifted)[0], impl.decode(q, k, v, 2)[0], atol=1e-4)


def test_left_padding_changes_nothing_for_the_real_tokens(impl):
    q, k, v = projections(batch=1, length=5)
    pad = torch.randn(1, 3, 2, 8)  # two padding tokens on the left of the prompt
    padded = [torch.cat([pad, x], dim=-2) for x in (q, k, v)]
    mask = torch.tensor([[0, 0, 1, 1, 1]])  # the prompt: 2 padding tokens, 3 real ones
    out, _ = impl.decode(*padded, 5, attention_mask=mask)
    alone, _ = impl.decode(q, k, v, 3)
    assert torch.allclose(out[..., 2:, :], alone, atol=1e-5)


def test_a_batch_with_one_left_padded_prompt_gives_each_its_own_result(impl):
    # Two prompts of 5 and 3 tokens in one batch: the short one is padded on the left with 2 tokens.
    long_q, long_k, long_v = projections(batch=1, length=5, seed=1)
    short_q, short_k, short_v = projections(batch=1, length=3, seed=2)
    pad = torch.randn(1, 3, 2, 8)
    batch = [
        torch.cat([long, torch.cat([pad, short], dim=-2)])
        for long, short in zip((long_q, long_k, long_v), (short_q, short_k, short_v))
    ]
    mask = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])
    out, _ = impl.decode(*batch, 5, attention_mask=mask)
    long_alone, _ = impl.decode(long_q, long_k, long_v, 5)
    short_alone, _ = impl.decode(short_q, short_k, short_v, 3)
    assert torch.allclose(out[:1], long_alone, atol=1e-5)
    assert torch.allclose(out[1:, ..., 2:, :], short_alone, atol=1e-5)
