"""Incremental decoding for one RoPE attention layer: a prefill, then one token at a time with a KV cache.

    out_t = sum_s softmax_s( <R(p_t) q_t, R(p_s) k_s> / sqrt(D) ) v_s
    over the keys s the cache holds for token t: s <= t, s > t - W (a window of W), not padding

R(p) is RoPE at position p (Su et al., RoFormer, 2021). A KV cache keeps every token's key and
value, so that a new token costs one row of attention instead of a whole forward (Pope et al.,
"Efficiently Scaling Transformer Inference", 2022). Positions are tracked apart from the cache: in
a left-padded batch each row counts its positions from its first real token (Hugging Face's
``generate`` builds ``position_ids`` from the attention mask), and a rolling buffer (Mistral 7B's
sliding window, Jiang et al. 2023) holds W keys whatever the position. Keys are cached rotated
(Llama, Hugging Face) or raw and rotated when read (StreamingLLM, Xiao et al. 2023; YaRN section
3.3 recommends it for dynamic NTK): a rotation on both sides of a dot product sees only the offset,
so both modes give the same attention.
"""

from __future__ import annotations

import math
from typing import Literal

import torch

from poslab.encodings._checks import require, require_positive_int
from poslab.encodings.rope import Pairing, rope_inverse_frequencies

CacheMode = Literal["rotated", "raw"]
CACHE_MODES: tuple[str, ...] = ("rotated", "raw")


def _turned(x: torch.Tensor, positions: torch.Tensor, inv_freq: torch.Tensor, pairing: Pairing) -> torch.Tensor:
    """x [B, H, N, D] with each feature pair turned by positions [B, N] * inv_freq [D/2]; x's dtype."""
    angles = positions.to(torch.float64)[:, None, :, None] * inv_freq  # [B, 1, N, D/2]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if pairing == "interleaved":
        first, second = x[..., 0::2], x[..., 1::2]
    else:
        first, second = x.chunk(2, dim=-1)
    turned = (first * cos - second * sin, first * sin + second * cos)
    if pairing == "interleaved":
        return torch.stack(turned, dim=-1).flatten(-2)
    return torch.cat(turned, dim=-1)


class _KVCache:
    """What a decoder keeps between steps: keys (rotated or raw), values, and each slot's position
    and padding flag. Slots are in token order; ``keep_last`` makes it a rolling buffer."""

    def __init__(self, mode: CacheMode, rotate) -> None:
        self.mode, self.rotate = mode, rotate
        self.keys = self.values = self.positions = self.real = None

    def append(self, keys: torch.Tensor, values: torch.Tensor, positions: torch.Tensor, real: torch.Tensor) -> None:
        stored = self.rotate(keys, positions) if self.mode == "rotated" else keys
        parts = (
            (stored, self.keys, -2),
            (values, self.values, -2),
            (positions, self.positions, -1),
            (real, self.real, -1),
        )
        self.keys, self.values, self.positions, self.real = (
            new if old is None else torch.cat((old, new), dim=dim) for new, old, dim in parts
        )

    def keep_last(self, window: int | None) -> None:
        if window is None:
            return
        start = max(self.keys.shape[-2] - window, 0)
        self.keys, self.values = self.keys[..., start:, :], self.values[..., start:, :]
        self.positions, self.real = self.positions[:, start:], self.real[:, start:]

    def keys_as_read(self) -> torch.Tensor:
        """The keys attention sees: raw keys are rotated now, by the positions kept beside them."""
        return self.keys if self.mode == "rotated" else self.rotate(self.keys, self.positions)


def _attend(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    """softmax(queries keys^T / sqrt(D)) values over the visible keys (visible broadcasts to
    [B, H, Tq, Tk]); a query that sees no key at all (a padding token) gets 0."""
    scores = torch.einsum("bhqd,bhkd->bhqk", queries, keys) / math.sqrt(queries.shape[-1])
    weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
    weights = torch.where(visible.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))
    return weights @ values


def _real_tokens(attention_mask: torch.Tensor | None, batch: int, length: int, device) -> torch.Tensor:
    """[B, T] True for every token that is not padding: the prompt's mask, then the decoded tokens."""
    real = torch.ones(batch, length, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, : attention_mask.shape[1]] = attention_mask.to(device) != 0
    return real


def _positions(real: torch.Tensor, position_ids: torch.Tensor | None) -> torch.Tensor:
    """[B, T]: the given position ids, else each token's count of real tokens before it."""
    if position_ids is not None:
        return position_ids.to(device=real.device, dtype=torch.long)
    return (real.long().cumsum(dim=-1) - 1).clamp(min=0)


def _prefill_visibility(real: torch.Tensor, window: int | None) -> torch.Tensor:
    """[B, 1, P, P]: query t sees key s when s <= t, s > t - window, and s is not padding."""
    slots = torch.arange(real.shape[-1], device=real.device)
    offset = slots[:, None] - slots[None, :]  # t - s
    allowed = offset >= 0
    if window is not None:
        allowed = allowed & (offset < window)
    return (allowed[None] & real[:, None, :])[:, None]


def _check(q, k, v, prompt_len, cache, window, attention_mask, position_ids, pairing) -> None:
    require(
        q.dim() == 4 and q.shape == k.shape == v.shape,
        f"q, k and v must all be [B, H, T, D], got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}",
    )
    batch, _, length, _ = q.shape
    require(
        isinstance(prompt_len, int) and 1 <= prompt_len <= length,
        f"prompt_len must be an int from 1 to T={length}, got {prompt_len!r}",
    )
    require(cache in CACHE_MODES, f"cache must be 'rotated' or 'raw', got {cache!r}")
    require(pairing in ("interleaved", "half"), f"pairing must be 'interleaved' or 'half', got {pairing!r}")
    if window is not None:
        require_positive_int(window, "window")
    if attention_mask is not None:
        require(
            tuple(attention_mask.shape) == (batch, prompt_len),
            f"attention_mask must be [B, P] = [{batch}, {prompt_len}], got {tuple(attention_mask.shape)}",
        )
    if position_ids is not None:
        require(
            tuple(position_ids.shape) == (batch, length) and not position_ids.is_floating_point(),
            f"position_ids must be integers of shape [B, T] = [{batch}, {length}], "
            f"got {position_ids.dtype} {tuple(position_ids.shape)}",
        )


def decode(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    prompt_len: int,
    *,
    cache: Literal["rotated", "raw"] = "rotated",
    window: int | None = None,
    attention_mask: torch.Tensor | None = None,
    position_ids: torch.Tensor | None = None,
    pairing: Literal["interleaved", "half"] = "half",
    base: float = 10000.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The prefill of ``prompt_len`` tokens, then one token at a time; returns ``(out, cached_keys)``.

    q, k, v ``[B, H, T, D]``; out ``[B, H, T, D]``; cached_keys ``[B, H, S, D]``, what the cache
    holds after the last token, oldest first (S = T, or min(window, T)). See the module docstring.
    """
    _check(q, k, v, prompt_len, cache, window, attention_mask, position_ids, pairing)
    batch, _, length, head_dim = q.shape
    inv_freq = rope_inverse_frequencies(head_dim, base, torch.float64).to(q.device)

    def rotate(x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        return _turned(x, at, inv_freq, pairing)

    real = _real_tokens(attention_mask, batch, length, q.device)
    positions = _positions(real, position_ids)
    store = _KVCache(cache, rotate)

    prompt = slice(0, prompt_len)
    store.append(k[..., prompt, :], v[..., prompt, :], positions[:, prompt], real[:, prompt])
    queries = rotate(q[..., prompt, :], positions[:, prompt])
    outputs = [_attend(queries, store.keys_as_read(), store.values, _prefill_visibility(real[:, prompt], window))]
    store.keep_last(window)

    for t in range(prompt_len, length):  # one token at a time: its key joins the cache, its query reads it
        step = slice(t, t + 1)
        step_positions = positions[:, step]
        store.append(k[..., step, :], v[..., step, :], step_positions, real[:, step])
        store.keep_last(window)
        query = rotate(q[..., step, :], step_positions)
        outputs.append(_attend(query, store.keys_as_read(), store.values, store.real[:, None, None, :]))
    return torch.cat(outputs, dim=-2), store.keys
