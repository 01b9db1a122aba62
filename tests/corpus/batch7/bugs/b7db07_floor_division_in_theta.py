# decode bug: floor division in the exponent: theta_i = base^floor(-2i/D), i.e. 1 or 1/base (one line changed from correct/b7dc02_complex_einsum_onepass.py)
from __future__ import annotations

import math
from typing import Literal

import torch


def _as_complex(x: torch.Tensor, pairing: str) -> torch.Tensor:
    """[..., D] real float64 -> [..., D/2] complex128, one complex number per rotated pair."""
    half = x.shape[-1] // 2
    if pairing == "interleaved":
        return torch.complex(x[..., 0::2].contiguous(), x[..., 1::2].contiguous())
    if pairing == "half":
        return torch.complex(x[..., :half].contiguous(), x[..., half:].contiguous())
    raise ValueError(f"unknown pairing {pairing!r}")


def _as_real(z: torch.Tensor, pairing: str) -> torch.Tensor:
    if pairing == "interleaved":
        return torch.stack((z.real, z.imag), dim=-1).flatten(-2)
    return torch.cat((z.real, z.imag), dim=-1)


def _phases(pos: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """pos [B, T] -> e^{i p theta_j} [B, 1, T, D/2] complex128."""
    j = torch.arange(0, dim // 2, dtype=torch.float64, device=pos.device)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64), -2 * j // dim)
    angle = torch.einsum("bt,j->btj", pos.to(torch.float64), theta)
    return torch.polar(torch.ones_like(angle), angle).unsqueeze(1)


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
    B, H, T, D = q.shape
    P = int(prompt_len)
    dev = q.device
    q64, k64, v64 = (x.to(torch.float64) for x in (q, k, v))

    real = torch.ones(B, T, dtype=torch.bool, device=dev)
    if attention_mask is not None:
        real[:, :P] = attention_mask.to(dev).bool()
    if position_ids is None:
        before = torch.cat([torch.zeros(B, 1, dtype=torch.long, device=dev), real.long().cumsum(1)[:, :-1]], dim=1)
        positions = before  # real tokens before each token (= 0, 1, ..., T-1 without a mask)
    else:
        positions = position_ids.to(dev)

    phase = _phases(positions, D, base)
    zq = _as_complex(q64, pairing) * phase
    zk = _as_complex(k64, pairing) * phase
    # <R q, R k> = Re(sum_j zq_j * conj(zk_j))
    scores = torch.einsum("bhtj,bhsj->bhts", zq, zk.conj()).real / math.sqrt(D)

    t = torch.arange(T, device=dev).view(T, 1)
    s = torch.arange(T, device=dev).view(1, T)
    keep = (s <= t) & real.view(B, 1, 1, T)
    if window is not None:
        keep = keep & (s > t - window)
    keep = keep | (s == t)  # padding queries look at themselves: finite, unchecked values
    bias = torch.where(keep, 0.0, float("-inf")).to(torch.float64)
    weights = torch.softmax(scores + bias, dim=-1)
    out = torch.einsum("bhts,bhsd->bhtd", weights, v64)

    S = T if window is None else min(window, T)
    if cache == "rotated":
        keys = _as_real(zk, pairing)
    elif cache == "raw":
        keys = k64.clone()  # k64 may be k itself (float64 input): never hand back a view of an input
    else:
        raise ValueError(f"unknown cache mode {cache!r}")
    return out.to(q.dtype), keys[:, :, T - S :].to(q.dtype)
