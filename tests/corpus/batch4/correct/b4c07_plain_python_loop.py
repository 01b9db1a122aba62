# a plain loop, as in a teaching notebook or a first serving prototype: row by row and token by token, the cache a Python list of (key, value, token) entries trimmed with pop(0) to W, padding never entering it, the position a running count of the row's real tokens, RoPE per token from index lists of the pairs
from __future__ import annotations

import math

import torch


def _rope_one(x, position, base, pair_a, pair_b):
    """x [H, D] of one token, every pair (x[pair_a[i]], x[pair_b[i]]) turned by position * base^(-2i/D)."""
    dim = x.shape[-1]
    angles = torch.tensor([position * base ** (-2 * i / dim) for i in range(dim // 2)], dtype=torch.float64, device=x.device)
    c, s = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[:, pair_a], x[:, pair_b]
    out = torch.empty_like(x)
    out[:, pair_a] = a * c - b * s
    out[:, pair_b] = a * s + b * c
    return out


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    if pairing == "interleaved":
        pair_a, pair_b = list(range(0, D, 2)), list(range(1, D, 2))
    else:
        pair_a, pair_b = list(range(D // 2)), list(range(D // 2, D))
    out = torch.zeros_like(q)
    S = T if window is None else min(window, T)
    cached_keys = torch.zeros(B, H, S, D, dtype=q.dtype, device=q.device)

    for b in range(B):
        entries = []  # (key as cached, value, token index, position), oldest first
        real_seen = 0  # the position of the row's next real token, when no position_ids are given

        def attend(t, position):
            query = _rope_one(q[b, :, t], position, base, pair_a, pair_b)
            visible = [e for e in entries if e[2] <= t and (window is None or e[2] > t - window)]
            keys = [e[0] if cache == "rotated" else _rope_one(e[0], e[3], base, pair_a, pair_b) for e in visible]
            scores = torch.stack([(query * key).sum(-1) for key in keys], dim=-1) / math.sqrt(D)  # [H, n]
            weights = torch.softmax(scores, dim=-1)
            return sum(weights[:, j : j + 1] * visible[j][1] for j in range(len(visible)))

        def append(t):
            nonlocal real_seen
            position = int(position_ids[b, t]) if position_ids is not None else real_seen
            real_seen += 1
            key = k[b, :, t]
            if cache == "rotated":
                key = _rope_one(key, position, base, pair_a, pair_b)
            entries.append((key, v[b, :, t], t, position))
            return position

        # prefill: the whole prompt enters the cache, then each prompt token attends causally
        prompt = [(t, append(t)) for t in range(prompt_len) if attention_mask is None or attention_mask[b, t]]
        for t, position in prompt:
            out[b, :, t] = attend(t, position)
        while window is not None and len(entries) > window:
            entries.pop(0)

        # decode: one token at a time
        for t in range(prompt_len, T):
            position = append(t)
            while window is not None and len(entries) > window:
                entries.pop(0)
            out[b, :, t] = attend(t, position)

        last = entries[-S:]
        for j, entry in enumerate(last):
            cached_keys[b, :, S - len(last) + j] = entry[0]
    return out, cached_keys
