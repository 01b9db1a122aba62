"""The attention exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import SAFETY, underflow, work_roundoff


def softmax_relative_error(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """[..., Tq, 1]: the relative error of each weight of a row.

    A logit is a dot product of D terms, scaled: off by (D + 2) u sum_d |q_d k_d| / sqrt(D), plus
    u |s + b| for the bias. Softmax turns logit errors into relative weight errors of at most twice
    the row's largest; exp, the row sum of Tk terms and the division add (Tk + 4) u.
    """
    u = work_roundoff(q.dtype)
    d, keys = q.shape[-1], k.shape[-2]
    magnitude = q.double().abs() @ k.double().abs().transpose(-2, -1) / math.sqrt(d)
    logit_error = (d + 2) * u * magnitude
    if bias is not None:
        b = bias.double()
        logit_error = logit_error + u * (magnitude + torch.where(torch.isfinite(b), b.abs(), torch.zeros_like(b)))
    return 2 * logit_error.amax(-1, keepdim=True) + (keys + 4) * u


def attention_tolerances(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None, weights: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(out tolerance [..., Tq, Dv], weights tolerance [..., Tq, Tk]) around the oracle's ``weights``.

    weights: each off by its relative error times its size. out = weights v: the weights' errors
    times |v| (sum_j w_j |v_j|, i.e. weights @ |v|), plus Tk + 2 roundings of that sum.
    """
    u, eta = work_roundoff(q.dtype), underflow(torch.float32)
    relative = softmax_relative_error(q, k, bias)
    spread = weights.double() @ v.double().abs()
    weights_tol = SAFETY * (weights.double() * relative + 4 * eta)
    out_tol = SAFETY * ((relative + (k.shape[-2] + 2) * u) * spread + 4 * eta)
    return out_tol, weights_tol


def row_sum_tolerance(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """[..., Tq]: a row of weights sums to 1 within their relative error and Tk + 2 roundings of the sum."""
    relative = softmax_relative_error(q, k, bias)[..., 0]
    return SAFETY * (relative + (k.shape[-2] + 2) * work_roundoff(q.dtype))


def reweighted_tolerance(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor, plain: torch.Tensor) -> torch.Tensor:
    """softmax(s + b) built from the computed softmax(s) (``plain``) times exp(b), renormalised by
    S = sum_j plain_j exp(b_j): the plain weights carry their relative error twice (the
    renormalisation), those with the bias once, and each plain weight's underflow (eta, a float32
    weight far below the row's largest is 0 or subnormal) comes back multiplied by exp(b_j) / S."""
    relative = 2 * softmax_relative_error(q, k) + softmax_relative_error(q, k, bias)
    scale = bias.double().exp()
    raw = plain.double() * scale
    total = raw.sum(-1, keepdim=True)
    expected = raw / total
    floor = 4 * underflow(torch.float32) * scale / total
    return SAFETY * (expected * relative + floor)


def matmul_tolerance(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """weights @ v: Tk + 2 roundings of sum_j |w_j| |v_j|."""
    u = work_roundoff(weights.dtype)
    return SAFETY * (weights.shape[-1] + 2) * u * (weights.double().abs() @ v.double().abs()) + underflow(torch.float32)
