# decode bug: the ring buffer is returned in slot order (t mod W), not oldest first (one line changed from correct/b7dc01_ring_buffer_loop.py)
from __future__ import annotations

import math
from typing import Literal

import torch


def _cos_sin(pos: torch.Tensor, dim: int, base: float, dtype: torch.dtype):
    """pos [B, n] integers -> cos, sin [B, 1, n, dim/2] (angles in float64, then cast)."""
    i = torch.arange(dim // 2, dtype=torch.float64, device=pos.device)
    theta = float(base) ** (-2.0 * i / dim)
    angle = pos.to(torch.float64)[..., None] * theta
    return torch.cos(angle)[:, None].to(dtype), torch.sin(angle)[:, None].to(dtype)


def _rope(x: torch.Tensor, pos: torch.Tensor, pairing: str, base: float) -> torch.Tensor:
    """x [B, H, n, D], pos [B, n] -> a new tensor, each pair turned counter-clockwise by pos * theta_i."""
    dim = x.shape[-1]
    cos, sin = _cos_sin(pos, dim, base, x.dtype)
    if pairing == "half":
        a, b = x[..., : dim // 2], x[..., dim // 2 :]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    raise ValueError(f"unknown pairing {pairing!r}")


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
    """The prefill of prompt_len tokens, then one token at a time: (out, cached_keys). See the module docstring."""
    if cache not in ("rotated", "raw"):
        raise ValueError(f"unknown cache mode {cache!r}")
    B, H, T, D = q.shape
    P = int(prompt_len)
    dtype, device = q.dtype, q.device
    k = k.to(dtype)
    v = v.to(dtype)
    scale = 1.0 / math.sqrt(D)

    # which tokens are real (not left padding) and where each one is
    real = torch.ones(B, T, dtype=torch.bool, device=device)
    if attention_mask is not None:
        real[:, :P] = attention_mask.to(device) != 0
    if position_ids is not None:
        pos = position_ids.to(device=device, dtype=torch.long)
    else:
        counts = real.long().cumsum(dim=1)
        pos = counts - real.long()  # real tokens before this one

    rq = _rope(q, pos, pairing, base)
    cap = T if window is None else min(int(window), T)

    # the prefill: every prompt token at once, causal (and windowed), padding keys masked
    rk_prompt = _rope(k[:, :, :P], pos[:, :P], pairing, base)
    idx = torch.arange(P, device=device)
    allowed = idx[None, :] <= idx[:, None]
    if window is not None:
        allowed = allowed & (idx[None, :] > idx[:, None] - int(window))
    allowed = allowed[None] & real[:, None, :P]
    allowed = allowed | torch.eye(P, dtype=torch.bool, device=device)  # a padding query sees itself (never all -inf)
    bias = torch.zeros(B, 1, P, P, dtype=dtype, device=device).masked_fill(~allowed[:, None], float("-inf"))
    scores = rq[:, :, :P] @ rk_prompt.transpose(-1, -2) * scale + bias
    out = torch.empty(B, H, T, D, dtype=dtype, device=device)
    out[:, :, :P] = torch.softmax(scores, dim=-1) @ v[:, :, :P]

    # the rolling buffer: token s lives in slot s % cap
    key_buf = torch.zeros(B, H, cap, D, dtype=dtype, device=device)
    val_buf = torch.zeros(B, H, cap, D, dtype=dtype, device=device)
    pos_buf = torch.zeros(B, cap, dtype=torch.long, device=device)
    ok_buf = torch.zeros(B, cap, dtype=torch.bool, device=device)
    for s in range(max(0, P - cap), P):
        slot = s % cap
        key_buf[:, :, slot] = rk_prompt[:, :, s] if cache == "rotated" else k[:, :, s]
        val_buf[:, :, slot] = v[:, :, s]
        pos_buf[:, slot] = pos[:, s]
        ok_buf[:, slot] = real[:, s]

    # one token at a time: append to the cache, attend to what the cache holds
    for t in range(P, T):
        slot = t % cap
        if cache == "rotated":
            key_buf[:, :, slot] = _rope(k[:, :, t : t + 1], pos[:, t : t + 1], pairing, base)[:, :, 0]
        else:
            key_buf[:, :, slot] = k[:, :, t]
        val_buf[:, :, slot] = v[:, :, t]
        pos_buf[:, slot] = pos[:, t]
        ok_buf[:, slot] = True
        n = min(t + 1, cap)
        keys = key_buf[:, :, :n] if cache == "rotated" else _rope(key_buf[:, :, :n], pos_buf[:, :n], pairing, base)
        step = rq[:, :, t : t + 1] @ keys.transpose(-1, -2) * scale  # [B, H, 1, n]
        step = step.masked_fill(~ok_buf[:, None, None, :n], float("-inf"))
        out[:, :, t : t + 1] = torch.softmax(step, dim=-1) @ val_buf[:, :, :n]

    cached_keys = key_buf  # oldest first
    return out, cached_keys
