# decode bug (base b4c05_layer_reset_einsum_f64): the rotated query is written back into q with copy_; q.to(float64) makes no copy of a float64 q, so the caller's float64 q is rotated in place
from __future__ import annotations

import torch


def _rotation_matrices(positions, dim, base):
    """[B, T, D/2, 2, 2] float64: pair i of a token at p turned by p * base^(-2i/D)."""
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=positions.device) / dim)
    angle = positions.to(torch.float64)[..., None] * theta
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack([torch.stack([c, -s], dim=-1), torch.stack([s, c], dim=-1)], dim=-2)


def _to_pairs(x, pairing):
    """[..., D] -> [..., D/2, 2]: (first, second) of every pair."""
    if pairing == "interleaved":
        return x.unflatten(-1, (-1, 2))
    return x.unflatten(-1, (2, -1)).transpose(-1, -2)


def _from_pairs(pairs, pairing):
    if pairing == "interleaved":
        return pairs.flatten(-2)
    return pairs.transpose(-1, -2).flatten(-2)


def _rotate(x, rotations, pairing):
    """x [B, H, n, D]; rotations [B, n, D/2, 2, 2]."""
    return _from_pairs(torch.einsum("bnpij,bhnpj->bhnpi", rotations, _to_pairs(x, pairing)), pairing)


class RopeDecoderLayer:
    def __init__(self):
        self.reset()

    def reset(self, cache_mode="rotated", window=None, pairing="half", base=10000.0):
        self.cache_mode, self.window, self.pairing, self.base = cache_mode, window, pairing, base
        self.k_cache = self.v_cache = None
        self.pos_cache = self.idx_cache = self.real_cache = None

    def _append(self, k, v, pos, idx, real):
        if self.k_cache is None:
            self.k_cache, self.v_cache, self.pos_cache, self.idx_cache, self.real_cache = k, v, pos, idx, real
        else:
            self.k_cache = torch.cat([self.k_cache, k], dim=2)
            self.v_cache = torch.cat([self.v_cache, v], dim=2)
            self.pos_cache = torch.cat([self.pos_cache, pos], dim=1)
            self.idx_cache = torch.cat([self.idx_cache, idx])
            self.real_cache = torch.cat([self.real_cache, real], dim=1)

    def _evict(self):
        if self.window is not None and self.k_cache.shape[2] > self.window:
            keep = slice(-self.window, None)
            self.k_cache, self.v_cache = self.k_cache[:, :, keep], self.v_cache[:, :, keep]
            self.pos_cache, self.idx_cache = self.pos_cache[:, keep], self.idx_cache[keep]
            self.real_cache = self.real_cache[:, keep]

    def forward(self, q, k, v, pos, idx, real):
        """q, k, v [B, H, n, D] of tokens idx [n] at positions pos [B, n]; real [B, n]. Returns [B, H, n, D]."""
        dim = q.shape[-1]
        rot = _rotation_matrices(pos, dim, self.base)
        q = q.copy_(_rotate(q, rot, self.pairing))
        if self.cache_mode == "rotated":
            k = _rotate(k, rot, self.pairing)
        self._append(k, v, pos, idx, real)
        keys = self.k_cache
        if self.cache_mode == "raw":
            keys = _rotate(keys, _rotation_matrices(self.pos_cache, dim, self.base), self.pairing)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, keys) / dim ** 0.5
        causal = self.idx_cache[None, :] <= idx[:, None]
        if self.window is not None:
            causal = causal & (self.idx_cache[None, :] > idx[:, None] - self.window)
        allowed = causal[None, None] & self.real_cache[:, None, None, :]
        scores = scores.masked_fill(~allowed, float("-inf"))
        out = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(dim=-1), self.v_cache)
        self._evict()
        return out


_layer = RopeDecoderLayer()


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    B, H, T, D = q.shape
    dtype, device = q.dtype, q.device
    q, k, v = q.to(torch.float64), k.to(torch.float64), v.to(torch.float64)
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, :prompt_len] = attention_mask.to(device=device, dtype=torch.bool)
    if position_ids is not None:
        pos = position_ids.to(device=device, dtype=torch.long)
    else:
        pos = torch.cumsum(real.to(torch.long), dim=1) - 1  # padding gets -1: never read
    idx = torch.arange(T, device=device)

    _layer.reset(cache, window, pairing, base)
    chunks = [slice(0, prompt_len)] + [slice(t, t + 1) for t in range(prompt_len, T)]
    out = torch.cat([_layer.forward(q[:, :, c], k[:, :, c], v[:, :, c], pos[:, c], idx[c], real[:, c]) for c in chunks], dim=2)
    return out.to(dtype), _layer.k_cache.to(dtype)
