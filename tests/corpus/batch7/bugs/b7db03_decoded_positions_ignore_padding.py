# decode bug: decoded token t is put at position t (its index), not after the row's real tokens (one line changed from correct/b7dc05_tokens_major_list_cache_views.py)
from __future__ import annotations

import math
from typing import Literal

import torch


def _rope_(x: torch.Tensor, pos: torch.Tensor, *, pairing: str, base: float) -> torch.Tensor:
    """Rotate x [B, n, H, D] in place (x must be a private tensor) by pos [B, n]; returns x."""
    dim = x.shape[-1]
    exponent = torch.arange(dim // 2, dtype=torch.float64, device=x.device) * (-2.0 / dim)
    angle = pos.to(torch.float64)[:, :, None, None] * torch.pow(float(base), exponent)  # [B, n, 1, D/2]
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    if pairing == "half":
        a, b = x[..., : dim // 2], x[..., dim // 2 :]
    elif pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        raise ValueError(f"unknown pairing {pairing!r}")
    a_old = a.clone()
    a.mul_(cos).addcmul_(b, sin, value=-1.0)  # a cos - b sin
    b.mul_(cos).addcmul_(a_old, sin)  # a sin + b cos
    return x


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
    scale = 1.0 / math.sqrt(D)

    # positions: row b's prompt starts at 0 on its first real token, decoded tokens carry on
    if attention_mask is None:
        real_prompt = torch.ones(B, P, dtype=torch.bool, device=device)
    else:
        real_prompt = attention_mask.to(device) != 0
    n_real = real_prompt.sum(dim=1, keepdim=True)  # [B, 1]
    prompt_pos = (real_prompt.long().cumsum(dim=1) - 1).clamp(min=0)
    new_pos = torch.arange(P, T, device=device).expand(B, -1)
    pos = torch.cat((prompt_pos, new_pos), dim=1) if position_ids is None else position_ids.to(device)
    real = torch.cat((real_prompt, torch.ones(B, T - P, dtype=torch.bool, device=device)), dim=1)

    # token-major private copies
    q_t = _rope_(q.transpose(1, 2).to(dtype=dtype, copy=True), pos, pairing=pairing, base=base)
    k_raw = k.transpose(1, 2).to(dtype=dtype, copy=True)
    k_rot = _rope_(k_raw.clone(), pos, pairing=pairing, base=base)
    v_t = v.transpose(1, 2).to(dtype=dtype, copy=True)
    v_t[~real] = 0.0  # padding values zeroed: a 0 weight times a non-finite padding value stays 0

    out_t = torch.empty(B, T, H, D, dtype=dtype, device=device)

    # prefill, all prompt tokens at once
    allowed = torch.tril(torch.ones(P, P, dtype=torch.bool, device=device))
    if window is not None:
        allowed = allowed & ~torch.tril(allowed, diagonal=-int(window))
    allowed = (allowed[None] & real[:, None, :P]) | torch.eye(P, dtype=torch.bool, device=device)
    scores = torch.einsum("bthd,bshd->bhts", q_t[:, :P], k_rot[:, :P]) * scale
    scores = torch.where(allowed[:, None], scores, torch.tensor(float("-inf"), dtype=dtype, device=device))
    out_t[:, :P] = torch.einsum("bhts,bshd->bthd", scores.softmax(dim=-1), v_t[:, :P])

    # the cache: a list of (key [B, H, D] as cached, value, position [B], real [B]), trimmed to the window
    entries = [
        ((k_rot if cache == "rotated" else k_raw)[:, s], v_t[:, s], pos[:, s], real[:, s]) for s in range(P)
    ]
    if window is not None:
        entries = entries[-int(window) :]
    for t in range(P, T):
        entries.append(((k_rot if cache == "rotated" else k_raw)[:, t], v_t[:, t], pos[:, t], real[:, t]))
        if window is not None and len(entries) > int(window):
            entries.pop(0)
        keys = torch.stack([e[0] for e in entries], dim=1)  # [B, n, H, D]
        if cache == "raw":
            keys = _rope_(keys, torch.stack([e[2] for e in entries], dim=1), pairing=pairing, base=base)
        vals = torch.stack([e[1] for e in entries], dim=1)
        ok = torch.stack([e[3] for e in entries], dim=1)  # [B, n]
        step = torch.einsum("bhd,bnhd->bhn", q_t[:, t], keys) * scale
        step = step.masked_fill(~ok[:, None, :], float("-inf"))
        out_t[:, t] = torch.einsum("bhn,bnhd->bhd", step.softmax(dim=-1), vals)

    cached_t = torch.stack([e[0] for e in entries], dim=1)  # [B, S, H, D], oldest first
    return out_t.transpose(1, 2), cached_t.transpose(1, 2)
