"""The decode exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import math

import torch

from grader.suite.rope.tolerances import norm_relative_tolerance, rope_tolerance
from grader.suite.tolerances import SAFETY, angle_error, pair_halves, underflow, work_roundoff


def pair_norms(x: torch.Tensor, pairing: str) -> torch.Tensor:
    """[..., D/2]: the length r of each feature pair, which every rotation keeps."""
    a, b = pair_halves(x.double(), pairing)
    return (a * a + b * b).sqrt()


def decode_tolerance(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    positions: torch.Tensor,
    visible: torch.Tensor,
    base: float,
    pairing: str,
) -> torch.Tensor:
    """[B, H, T, D]: how far a correct decoder's out may sit from the float64 full forward.

    A pair of q_t (length r) turned by a wrong angle moves by r times the angle's error; the product
    of two rotated pairs, r_q r_k cos(angle between them), by r_q r_k times both angles' errors
    (``angle_error`` at p_t and p_s) plus each side's rotation roundings (as ``norm_relative_tolerance``).
    The score of query t and key s adds the dot product's (D + 2) roundings and is divided by sqrt(D);
    then softmax and out as in attention: twice the largest error of a visible score, (T + 4)
    roundings, times |v| (its largest value over the keys, per feature). positions [B, T]; visible
    [B, T, T] (query t, key s).
    """
    u = work_roundoff(q.dtype)
    head_dim, length = q.shape[-1], q.shape[-2]
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = angle_error(positions[:, None], theta)  # [B, 1, T, D/2]
    r_q, r_k = pair_norms(q, pairing), pair_norms(k, pairing)
    rounding = 2 * norm_relative_tolerance(q.dtype) / SAFETY + (head_dim + 2) * u
    score = (
        (r_q * angles) @ r_k.transpose(-2, -1)
        + r_q @ (r_k * angles).transpose(-2, -1)
        + rounding * r_q @ r_k.transpose(-2, -1)
    ) / math.sqrt(head_dim)  # [B, H, T, T]
    worst = torch.where(visible[:, None], score, torch.zeros_like(score)).amax(-1, keepdim=True)
    relative = 2 * worst + (2 * length + 6) * u  # the weights' (T + 4) and out's sum (T + 2)
    return SAFETY * (relative * v.double().abs().amax(-2, keepdim=True) + 4 * underflow(torch.float32))


def cached_key_tolerance(k: torch.Tensor, positions: torch.Tensor, base: float, pairing: str) -> torch.Tensor:
    """[B, H, S, D]: a cached key rotated by its position [B, S], entry by entry, as ``rope_tolerance``."""
    return rope_tolerance(k, positions[:, None], base, pairing)


def length_tolerance(k: torch.Tensor) -> torch.Tensor:
    """[..., 1]: a rotation keeps a key's length up to its roundings (whatever the angle)."""
    return norm_relative_tolerance(k.dtype) * k.double().norm(dim=-1, keepdim=True) + underflow(k.dtype)
