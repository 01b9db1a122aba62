"""The decode reference held against Hugging Face's cached decoding (transformers: a test-only dependency).

A one-layer ``LlamaModel`` (and a ``MistralModel`` for the sliding window) is built from its config with
random weights: no download, no network. It runs a prefill and then one token at a time with its
``DynamicCache``, as ``generate`` does (a left-padded batch gets ``generate``'s position ids: the mask's
cumsum - 1, padding at 1). Hooks record the q, k, v projections the layer computes and its attention output
before ``o_proj``. Given the same q, k, v, ``poslab.encodings.decode`` must give the same outputs for every
real token, and cache the same rotated keys, to 1e-5 (float32, as the model runs).
"""

from __future__ import annotations

import importlib.util
import os

import pytest
import torch

from poslab.encodings import decode
from tests.conftest import require_system_part

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing below needs the hub; make sure nothing tries
TOLERANCE = 1e-5
HIDDEN, HEADS, HEAD_DIM = 32, 4, 8


@pytest.fixture(scope="module")
def transformers():
    require_system_part(
        importlib.util.find_spec("transformers") is not None, "transformers (requirements-dev.txt) is not installed"
    )
    import transformers

    return transformers


def tiny_model(transformers, sliding_window: int | None = None):
    """A one-layer model with q, k, v of order 1 (initializer_range 0.25 on a hidden size of 32)."""
    torch.manual_seed(0)
    sizes = dict(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        head_dim=HEAD_DIM,
        intermediate_size=64,
        num_hidden_layers=1,
        vocab_size=16,
        max_position_embeddings=256,
        initializer_range=0.25,
        attn_implementation="eager",
    )
    if sliding_window is None:
        return transformers.LlamaModel(transformers.LlamaConfig(**sizes)).eval()
    return transformers.MistralModel(transformers.MistralConfig(sliding_window=sliding_window, **sizes)).eval()


def generate_positions(mask: torch.Tensor, length: int) -> torch.Tensor:
    """[B, T]: what generate passes: cumsum(mask) - 1 over the prompt (padding at 1), then + 1 per new token."""
    prompt = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)
    steps = prompt[:, -1:] + torch.arange(1, length - mask.shape[1] + 1)
    return torch.cat([prompt, steps], dim=1)


def hf_decode(transformers, model, embeds, prompt_len, mask=None, positions=None):
    """Prefill, then one token per call with the model's DynamicCache: (q, k, v, out, cached keys), [B, H, T, D]."""
    attention = model.layers[0].self_attn
    seen = {"q": [], "k": [], "v": [], "out": []}
    hooks = [
        getattr(attention, f"{name}_proj").register_forward_hook(
            lambda module, args, output, name=name: seen[name].append(output.detach())
        )
        for name in "qkv"
    ]
    hooks.append(attention.o_proj.register_forward_pre_hook(lambda module, args: seen["out"].append(args[0].detach())))
    cache = transformers.DynamicCache(config=model.config)
    spans = [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, embeds.shape[1])]
    full_mask = (
        None
        if mask is None
        else torch.cat([mask.long(), torch.ones(mask.shape[0], embeds.shape[1] - prompt_len, dtype=torch.long)], dim=1)
    )
    try:
        with torch.no_grad():
            for start, stop in spans:
                extra = (
                    {}
                    if mask is None
                    else {"attention_mask": full_mask[:, :stop], "position_ids": positions[:, start:stop]}
                )
                model(inputs_embeds=embeds[:, start:stop], cache=cache, use_cache=True, **extra)
    finally:
        for hook in hooks:
            hook.remove()

    def heads(parts):  # [B, T, H * D] pieces -> [B, H, T, D]
        return torch.cat(parts, dim=1).unflatten(-1, (HEADS, HEAD_DIM)).transpose(1, 2)

    return heads(seen["q"]), heads(seen["k"]), heads(seen["v"]), heads(seen["out"]), cache.layers[0].keys


def gap(ours: torch.Tensor, theirs: torch.Tensor, real: torch.Tensor | None = None) -> float:
    """The largest |difference| over the real tokens (the slot axis is -2)."""
    difference = (ours.double() - theirs.double()).abs()
    if real is not None:
        difference = difference * real[:, None, :, None]
    return float(difference.max())


def embeddings(batch: int, length: int, seed: int) -> torch.Tensor:
    return torch.randn(batch, length, HIDDEN, generator=torch.Generator().manual_seed(seed))


def test_llama_prefill_then_steps(transformers):
    model = tiny_model(transformers)
    q, k, v, out, cached = hf_decode(transformers, model, embeddings(2, 10, seed=1), prompt_len=4)
    assert q.shape == (2, HEADS, 10, HEAD_DIM) and float(q.std()) > 0.3  # scores of order 1, not ~0
    for cache in ("rotated", "raw"):
        ours, ours_cached = decode(q, k, v, 4, cache=cache)
        print(f"\nLlama, prompt 4 + 6 steps, cache={cache}: max |out - HF| = {gap(ours, out):.2e}")
        assert gap(ours, out) <= TOLERANCE
    ours, ours_cached = decode(q, k, v, 4)
    assert gap(ours_cached, cached) <= TOLERANCE  # both caches hold the keys rotated by their positions


def test_llama_left_padded_batch(transformers):
    model = tiny_model(transformers)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]])
    positions = generate_positions(mask, 11)
    q, k, v, out, cached = hf_decode(transformers, model, embeddings(3, 11, seed=2), 6, mask, positions)
    real = torch.cat([mask.bool(), torch.ones(3, 5, dtype=torch.bool)], dim=1)
    for given in ({"attention_mask": mask}, {"attention_mask": mask.bool(), "position_ids": positions}):
        for cache in ("rotated", "raw"):
            ours, ours_cached = decode(q, k, v, 6, cache=cache, **given)
            print(
                f"\nLlama, left-padded batch, {', '.join(given)}, cache={cache}: "
                f"max |out - HF| = {gap(ours, out, real):.2e}"
            )
            assert gap(ours, out, real) <= TOLERANCE
        ours, ours_cached = decode(q, k, v, 6, **given)
        assert gap(ours_cached, cached, real) <= TOLERANCE
    assert gap(decode(q, k, v, 6)[0], out, real) > 1e-2  # the padding matters on these inputs: this can fail


def test_mistral_sliding_window(transformers):
    window = 3
    model = tiny_model(transformers, sliding_window=window)
    q, k, v, out, cached = hf_decode(transformers, model, embeddings(2, 11, seed=3), prompt_len=5)
    for cache in ("rotated", "raw"):
        ours, ours_cached = decode(q, k, v, 5, cache=cache, window=window)
        print(f"\nMistral, window {window}, prompt 5 + 6 steps, cache={cache}: max |out - HF| = {gap(ours, out):.2e}")
        assert gap(ours, out) <= TOLERANCE
    ours, ours_cached = decode(q, k, v, 5, window=window)
    assert ours_cached.shape[-2] == window and cached.shape[-2] == window - 1  # HF keeps W - 1 between steps
    assert gap(ours_cached[..., 1:, :], cached) <= TOLERANCE
    unwindowed, _ = decode(q, k, v, 5)
    assert gap(unwindowed, out) > 1e-2  # the window matters on these inputs: the comparison can fail
