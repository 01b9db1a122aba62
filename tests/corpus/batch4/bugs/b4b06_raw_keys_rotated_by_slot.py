# decode bug (base b4c06_flax_functional_cache): raw cached keys are rotated by their slot in the cache (StreamingLLM's in-cache positions) instead of their own positions
from __future__ import annotations

from typing import NamedTuple

import torch


class DecodeCache(NamedTuple):
    cached_key: torch.Tensor  # [B, H, L, D]
    cached_value: torch.Tensor
    cached_position: torch.Tensor  # [B, L]
    cached_token: torch.Tensor  # [L]: token index, -1 while empty
    cached_real: torch.Tensor  # [B, L]
    cache_index: int  # tokens written so far


def init_cache(batch, heads, length, dim, dtype, device):
    return DecodeCache(
        torch.zeros(batch, heads, length, dim, dtype=dtype, device=device),
        torch.zeros(batch, heads, length, dim, dtype=dtype, device=device),
        torch.zeros(batch, length, dtype=torch.long, device=device),
        torch.full((length,), -1, dtype=torch.long, device=device),
        torch.zeros(batch, length, dtype=torch.bool, device=device),
        0,
    )


def write(cache: DecodeCache, key, value, position, token, real) -> DecodeCache:
    """The cache with n new entries, in a ring of L slots (the last L of them if n > L)."""
    length = cache.cached_key.shape[2]
    n = key.shape[2]
    if n > length:
        key, value, position, token, real = key[:, :, -length:], value[:, :, -length:], position[:, -length:], token[-length:], real[:, -length:]
        return write(cache._replace(cache_index=cache.cache_index + n - length), key, value, position, token, real)
    start = cache.cache_index % length
    if start + n <= length:  # contiguous: dynamic_update_slice
        end = start + n
        return DecodeCache(
            torch.slice_scatter(cache.cached_key, key, dim=2, start=start, end=end),
            torch.slice_scatter(cache.cached_value, value, dim=2, start=start, end=end),
            torch.slice_scatter(cache.cached_position, position, dim=1, start=start, end=end),
            torch.slice_scatter(cache.cached_token, token, dim=0, start=start, end=end),
            torch.slice_scatter(cache.cached_real, real, dim=1, start=start, end=end),
            cache.cache_index + n,
        )
    slots = (cache.cache_index + torch.arange(n, device=key.device)) % length  # wraps around the ring
    return DecodeCache(
        cache.cached_key.index_copy(2, slots, key),
        cache.cached_value.index_copy(2, slots, value),
        cache.cached_position.index_copy(1, slots, position),
        cache.cached_token.index_copy(0, slots, token),
        cache.cached_real.index_copy(1, slots, real),
        cache.cache_index + n,
    )


def oldest_first(cache: DecodeCache) -> torch.Tensor:
    length = cache.cached_key.shape[2]
    if cache.cache_index <= length:
        return cache.cached_key[:, :, : cache.cache_index]
    return torch.roll(cache.cached_key, shifts=-(cache.cache_index % length), dims=2)


def _apply_rope(inputs, positions, base, pairing):
    """inputs [B, H, n, D], positions [B, n]."""
    head_dim = inputs.shape[-1]
    fraction = 2 * torch.arange(0, head_dim // 2, device=inputs.device, dtype=inputs.dtype) / head_dim
    timescale = base ** fraction
    sinusoid_inp = positions[:, None, :, None].to(inputs.dtype) / timescale
    sin, cos = torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)
    if pairing == "interleaved":
        first_half, second_half = inputs.unflatten(-1, (-1, 2)).unbind(-1)
    else:
        first_half, second_half = torch.split(inputs, head_dim // 2, dim=-1)
    first_part = first_half * cos - second_half * sin
    second_part = second_half * cos + first_half * sin
    if pairing == "interleaved":
        return torch.stack([first_part, second_part], dim=-1).flatten(-2)
    return torch.cat([first_part, second_part], dim=-1)


def dot_product_attention(query, key, value, mask):
    depth = query.shape[-1]
    query = query / depth ** 0.5
    logits = torch.einsum("bhqd,bhkd->bhqk", query, key)
    big_neg = torch.finfo(logits.dtype).min
    logits = torch.where(mask, logits, big_neg)
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(logits, dim=-1), value)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real = torch.cat([attention_mask.to(device).bool(), real[:, prompt_len:]], dim=1)
    if position_ids is None:
        position_ids = torch.clamp(torch.cumsum(real.long(), axis=-1) - 1, min=0)
    positions = position_ids.to(device).long()
    tokens = torch.arange(T, device=device)
    length = T if window is None else min(window, T)
    state = init_cache(B, H, length, D, q.dtype, device)

    outputs = []
    for step in [slice(0, prompt_len)] + [slice(t, t + 1) for t in range(prompt_len, T)]:
        query = _apply_rope(q[:, :, step], positions[:, step], base, pairing)
        key = k[:, :, step]
        if cache == "rotated":
            key = _apply_rope(key, positions[:, step], base, pairing)
        state = write(state, key, v[:, :, step], positions[:, step], tokens[step], real[:, step])
        if step.stop - step.start == 1:  # decoding: the cache holds exactly what this token may see
            keys, values, key_pos, key_token, key_real = state.cached_key, state.cached_value, state.cached_position, state.cached_token, state.cached_real
        else:  # prefill: attend to the prompt itself (the cache may already have dropped some of it)
            keys, values, key_pos, key_token, key_real = key, v[:, :, step], positions[:, step], tokens[step], real[:, step]
        if cache == "raw":
            keys = _apply_rope(keys, torch.arange(keys.shape[2], device=device).expand(B, -1), base, pairing)
        query_token = tokens[step][:, None]
        mask = (key_token[None, :] >= 0) & (key_token[None, :] <= query_token)
        if window is not None:
            mask = mask & (key_token[None, :] > query_token - window)
        mask = mask[None, None] & key_real[:, None, None, :]
        outputs.append(dot_product_attention(query, keys, values, mask))

    return torch.cat(outputs, dim=2), oldest_first(state)
