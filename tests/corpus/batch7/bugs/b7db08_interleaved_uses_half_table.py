# decode bug: the interleaved pairing reuses Llama's cat((freqs, freqs)) table: the two members of a pair get different angles (one line changed from correct/b7dc03_hf_tables_sdpa_shift_cache.py)
from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rotate_every_two(x: torch.Tensor) -> torch.Tensor:
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def _rotary_tables(position_ids: torch.Tensor, dim: int, base: float, pairing: str, dtype: torch.dtype):
    """cos, sin [B, 1, T, D]: one table row per distinct position, gathered for every token."""
    inv_freq = 1.0 / (float(base) ** (torch.arange(0, dim, 2, dtype=torch.float64, device=position_ids.device) / dim))
    distinct, which = torch.unique(position_ids, return_inverse=True)
    freqs = distinct.to(torch.float64)[:, None] * inv_freq[None, :]  # [U, D/2]
    if pairing == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
    elif pairing == "interleaved":
        emb = torch.cat((freqs, freqs), dim=-1)
    else:
        raise ValueError(f"unknown pairing {pairing!r}")
    cos_table, sin_table = emb.cos().to(dtype), emb.sin().to(dtype)
    return cos_table[which].unsqueeze(1), sin_table[which].unsqueeze(1)


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
    k, v = k.to(dtype), v.to(dtype)

    full_mask = torch.ones(B, T, dtype=torch.long, device=device)
    if attention_mask is not None:
        full_mask[:, :P] = (attention_mask.to(device) != 0).long()
    if position_ids is None:
        position_ids = full_mask.cumsum(-1) - 1
        position_ids = position_ids.masked_fill(full_mask == 0, 1)
    cos, sin = _rotary_tables(position_ids.to(device), D, base, pairing, dtype)
    rotate = _rotate_half if pairing == "half" else _rotate_every_two

    def turn(x: torch.Tensor, c: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return x * c + rotate(x) * s

    q_rot = turn(q, cos, sin)

    # prefill
    i = torch.arange(P, device=device)
    attend = i[:, None] >= i[None, :]
    if window is not None:
        attend = attend & (i[:, None] - i[None, :] < window)
    attend = (attend[None] & full_mask[:, None, :P].bool()) | torch.eye(P, dtype=torch.bool, device=device)
    k_prompt_rot = turn(k[:, :, :P], cos[:, :, :P], sin[:, :, :P])
    outs = [F.scaled_dot_product_attention(q_rot[:, :, :P], k_prompt_rot, v[:, :, :P], attn_mask=attend[:, None])]

    cap = T if window is None else min(window, T)
    keep = slice(max(0, P - cap), P)
    key_cache = (k_prompt_rot if cache == "rotated" else k[:, :, :P])[:, :, keep].clone()
    val_cache = v[:, :, keep]
    cos_cache, sin_cache = cos[:, :, keep], sin[:, :, keep]
    ok_cache = full_mask[:, keep].bool()

    # decode: append, crop to the newest cap entries, attend
    for t in range(P, T):
        new_key = k[:, :, t : t + 1]
        if cache == "rotated":
            new_key = turn(new_key, cos[:, :, t : t + 1], sin[:, :, t : t + 1])
        key_cache = torch.cat((key_cache, new_key), dim=2)[:, :, -cap:]
        val_cache = torch.cat((val_cache, v[:, :, t : t + 1]), dim=2)[:, :, -cap:]
        cos_cache = torch.cat((cos_cache, cos[:, :, t : t + 1]), dim=2)[:, :, -cap:]
        sin_cache = torch.cat((sin_cache, sin[:, :, t : t + 1]), dim=2)[:, :, -cap:]
        ok_cache = torch.cat((ok_cache, torch.ones(B, 1, dtype=torch.bool, device=device)), dim=1)[:, -cap:]
        keys = key_cache if cache == "rotated" else turn(key_cache, cos_cache, sin_cache)
        outs.append(
            F.scaled_dot_product_attention(q_rot[:, :, t : t + 1], keys, val_cache, attn_mask=ok_cache[:, None, None, :])
        )
    return torch.cat(outs, dim=2), key_cache
