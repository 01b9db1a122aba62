# decode bug (base b4c01_hf_dynamic_cache_cat): with no position_ids the positions are the cache positions 0..T-1 (cache_position.unsqueeze(0)), so a left-padded row's positions count its padding
from __future__ import annotations

import torch


class _DynamicLayer:
    """One layer's cache. update() returns what this step attends to, then a sliding layer trims to W."""

    def __init__(self, sliding_window: int | None) -> None:
        self.sliding_window = sliding_window
        self.keys = self.values = None
        self.key_positions = None  # [B, S]: the RoPE position of every cached key (the raw mode reads it)
        self.key_indices = None  # [S]: the token index of every cached key (the masks read it)

    def update(self, keys, values, positions, indices):
        if self.keys is None:
            self.keys, self.values, self.key_positions, self.key_indices = keys, values, positions, indices
        else:
            self.keys = torch.cat([self.keys, keys], dim=-2)
            self.values = torch.cat([self.values, values], dim=-2)
            self.key_positions = torch.cat([self.key_positions, positions], dim=-1)
            self.key_indices = torch.cat([self.key_indices, indices], dim=-1)
        states = self.keys, self.values, self.key_positions, self.key_indices
        if self.sliding_window is not None:
            w = self.sliding_window
            self.keys, self.values = self.keys[..., -w:, :], self.values[..., -w:, :]
            self.key_positions, self.key_indices = self.key_positions[..., -w:], self.key_indices[-w:]
        return states


def _rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _cos_sin(position_ids, dim, base, dtype):
    """[B, 1, T, D] cos and sin, each frequency written twice (half layout)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=position_ids.device).to(dtype) / dim))
    freqs = position_ids[..., None].to(dtype) * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[:, None], emb.sin()[:, None]


def _apply_rotary_pos_emb(x, cos, sin):
    return x * cos + _rotate_half(x) * sin


def _sliding_causal_mask(query_indices, key_indices, mask_2d, window, dtype):
    """[B, 1, q, k] additive: 0 where a query may look, finfo.min elsewhere."""
    allowed = key_indices[None, :] <= query_indices[:, None]
    if window is not None:
        allowed = allowed & (key_indices[None, :] > query_indices[:, None] - window)
    allowed = allowed[None, None] & mask_2d[:, key_indices].bool()[:, None, None, :]
    bias = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return bias.masked_fill(~allowed, torch.finfo(dtype).min)


def _eager_attention(query, key, value, mask):
    scaling = query.shape[-1] ** -0.5
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling + mask
    weights = torch.softmax(weights, dim=-1)
    return torch.matmul(weights, value)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    if pairing == "interleaved":  # the same permutation of q and k leaves every score unchanged
        order = torch.cat([torch.arange(0, D, 2), torch.arange(1, D, 2)]).to(device)
        q, k = q[..., order], k[..., order]
    mask_2d = torch.ones(B, T, dtype=torch.long, device=device)  # generate() appends a 1 per new token
    if attention_mask is not None:
        mask_2d[:, :prompt_len] = attention_mask.to(device=device, dtype=torch.long)
    if position_ids is None:
        position_ids = torch.arange(T, device=device).unsqueeze(0).expand(B, -1)
        position_ids = position_ids.masked_fill(mask_2d == 0, 1)
    position_ids = position_ids.to(device)
    cos, sin = _cos_sin(position_ids, D, base, q.dtype)

    layer = _DynamicLayer(window)
    outputs = []
    for start, end in [(0, prompt_len)] + [(t, t + 1) for t in range(prompt_len, T)]:
        cache_position = torch.arange(start, end, device=device)
        step_cos, step_sin = cos[..., start:end, :], sin[..., start:end, :]
        query_states = _apply_rotary_pos_emb(q[..., start:end, :], step_cos, step_sin)
        key_states = k[..., start:end, :]
        if cache == "rotated":
            key_states = _apply_rotary_pos_emb(key_states, step_cos, step_sin)
        keys, values, key_positions, key_indices = layer.update(
            key_states, v[..., start:end, :], position_ids[:, start:end], cache_position)
        if cache == "raw":
            keys = _apply_rotary_pos_emb(keys, *_cos_sin(key_positions, D, base, q.dtype))
        mask = _sliding_causal_mask(cache_position, key_indices, mask_2d, window, q.dtype)
        outputs.append(_eager_attention(query_states, keys, values, mask))

    cached_keys = layer.keys
    if pairing == "interleaved":
        cached_keys = cached_keys[..., torch.argsort(order)]
    return torch.cat(outputs, dim=-2), cached_keys
