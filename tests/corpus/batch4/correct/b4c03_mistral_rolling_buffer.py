# Mistral reference style: a rotating buffer of W slots written at token index % W (to_cache_mask keeps the prompt's last W), complex RoPE with view_as_complex (the half pairing reordered into complex pairs), prefill against its own keys with a local causal mask, decode against the whole buffer, unrotate() at the end
from __future__ import annotations

import math

import torch


def _precompute_freqs_cis(positions, dim, theta, dtype):
    """[B, T, D/2] complex: exp(i * position * theta_j)."""
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=positions.device, dtype=dtype) / dim))
    angles = positions.to(dtype)[..., None] * freqs
    return torch.polar(torch.ones_like(angles), angles)


def _as_complex(x, pairing):
    if pairing == "half":  # (x[i], x[i + D/2]) becomes the real and imaginary part of pair i
        x = x.unflatten(-1, (2, -1)).transpose(-1, -2)
    else:
        x = x.unflatten(-1, (-1, 2))
    return torch.view_as_complex(x.contiguous())


def _from_complex(z, pairing):
    x = torch.view_as_real(z)
    if pairing == "half":
        x = x.transpose(-1, -2)
    return x.flatten(-2)


def _apply_rotary_emb(x, freqs_cis, pairing):
    """x [B, H, T, D], freqs_cis [B, T, D/2]."""
    return _from_complex(_as_complex(x, pairing) * freqs_cis[:, None], pairing).type_as(x)


class _RotatingBufferCache:
    def __init__(self, batch, heads, sliding_window, head_dim, dtype, device):
        self.sliding_window = sliding_window
        self.cache_k = torch.zeros(batch, heads, sliding_window, head_dim, dtype=dtype, device=device)
        self.cache_v = torch.zeros_like(self.cache_k)
        self.cache_pos = torch.zeros(batch, sliding_window, dtype=torch.long, device=device)
        self.cache_real = torch.zeros(batch, sliding_window, dtype=torch.bool, device=device)
        self.cache_token = torch.full((sliding_window,), -1, dtype=torch.long, device=device)
        self.seqlen = 0

    def add(self, token_index, xk, xv, pos, real):
        """Stores the last W of these tokens at token index % W."""
        to_cache = token_index > token_index[-1] - self.sliding_window
        slots = token_index[to_cache] % self.sliding_window
        self.cache_k[:, :, slots] = xk[:, :, to_cache]
        self.cache_v[:, :, slots] = xv[:, :, to_cache]
        self.cache_pos[:, slots] = pos[:, to_cache]
        self.cache_real[:, slots] = real[:, to_cache]
        self.cache_token[slots] = token_index[to_cache]
        self.seqlen = int(token_index[-1]) + 1

    def unrotate(self, cache):
        if self.seqlen < self.sliding_window:
            return cache[:, :, : self.seqlen]
        position = self.seqlen % self.sliding_window
        return torch.cat([cache[:, :, position:], cache[:, :, :position]], dim=2)


def _attention(xq, keys, values, allowed):
    scores = torch.matmul(xq, keys.transpose(-1, -2)) / math.sqrt(xq.shape[-1])
    scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # a padding query sees no key
    return torch.matmul(weights, values)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    device = q.device
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.bool().to(device)
    if position_ids is None:
        position_ids = (torch.cumsum(real.long(), dim=-1) - 1).clamp(min=0)
    positions = position_ids.to(device).long()
    freqs_cis = _precompute_freqs_cis(positions, D, base, q.dtype)
    rope = lambda x, cis: _apply_rotary_emb(x, cis, pairing)

    sliding_window = T if window is None else window
    buffer = _RotatingBufferCache(B, H, sliding_window, D, q.dtype, device)
    P = prompt_len

    # prefill: the prompt attends to its own keys, causally and locally
    xq, xk = rope(q[:, :, :P], freqs_cis[:, :P]), rope(k[:, :, :P], freqs_cis[:, :P])
    i = torch.arange(P, device=device)
    local = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - sliding_window)
    outputs = [_attention(xq, xk, v[:, :, :P], local[None, None] & real[:, None, None, :P])]
    buffer.add(i, xk if cache == "rotated" else k[:, :, :P], v[:, :, :P], positions[:, :P], real[:, :P])

    for t in range(P, T):
        cis = freqs_cis[:, t : t + 1]
        xk = rope(k[:, :, t : t + 1], cis) if cache == "rotated" else k[:, :, t : t + 1]
        buffer.add(torch.tensor([t], device=device), xk, v[:, :, t : t + 1], positions[:, t : t + 1], real[:, t : t + 1])
        keys = buffer.cache_k
        if cache == "raw":
            keys = rope(keys, _precompute_freqs_cis(buffer.cache_pos, D, base, q.dtype))
        allowed = (buffer.cache_token >= 0)[None, :] & buffer.cache_real  # slot order does not matter to softmax
        outputs.append(_attention(rope(q[:, :, t : t + 1], cis), keys, buffer.cache_v, allowed[:, None, None, :]))

    return torch.cat(outputs, dim=2), buffer.unrotate(buffer.cache_k)
