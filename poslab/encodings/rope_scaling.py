"""RoPE context extension: frequency schedules in one registry with one signature.

Every schedule maps (head_dim D, base b, scale factor s, original training length L, current
length, its own parameters) to (inverse frequencies ``[D/2]``, attention scale). With
theta_i = b^(-2i/D) the default frequencies and lambda_i = 2 pi / theta_i their wavelengths:

* ``none``        theta_i                                         (Su et al., RoFormer, 2021)
* ``linear``      theta_i / s                  position interpolation: Chen et al.,
                                               "Extending Context Window of LLMs via Positional
                                               Interpolation", 2023, eq. (4)
* ``ntk``         b' = b s^(D / (D - 2)),  theta'_i = b'^(-2i/D)   "NTK-aware" scaling
                                               (bloc97, 2023; Peng et al., YaRN, 2023, section 3.2)
* ``dynamic``     as ``ntk`` with s replaced by  s T / L - (s - 1)  for the current length
                  T > L, and no change for T <= L: Hugging Face's formula (emozilla, 2023).
                  YaRN's own dynamic scaling (Peng et al., 2023, section 3.3) uses s = T / L.
* ``yarn``        ramp r_i = clamp((i - lo) / (hi - lo), 0, 1) over the pair index i, with
                  lo = floor(d(beta_fast)), hi = ceil(d(beta_slow)) and
                  d(n) = D ln(L / (2 pi n)) / (2 ln b) the pair making n turns in L positions;
                  theta'_i = (theta_i / s) r_i + theta_i (1 - r_i),
                  attention scale sqrt(1/t) = 0.1 ln(s) + 1, applied to both q and k, so
                  the logits are multiplied by its square  (Peng et al., "YaRN", 2023, arXiv 2309.00071,
                  eqs. (18)-(22)). The ramp is linear in the pair index i, as in the authors' reference
                  code (jquesnelle/yarn) and in Hugging Face's; it is what the tests hold against
                  transformers.
* ``yarn_paper``  the paper's own ramp, linear in the number of turns r_i = L / lambda_i instead:
                  gamma_i = clamp((r_i - beta_slow) / (beta_fast - beta_slow), 0, 1), the same blend
                  and attention scale. Turns fall geometrically with i, so the two ramps differ
                  between the two edges: at s = 16 by up to about 3x in theta' (jquesnelle/yarn issue #60).
* ``llama3``      lambda_i > L / low_freq_factor:  theta_i / s;  lambda_i < L / high_freq_factor:
                  theta_i; in between, with u = (L / lambda_i - low) / (high - low):
                  (1 - u) theta_i / s + u theta_i. The rule comes from Meta's reference code and the
                  released configs (its factors were grid-searched), not from a paper; it shipped with
                  Llama 3.1 (s = 8, low 1, high 4, L = 8192) and Llama 3.2 1B/3B (s = 32); Llama 3 had
                  no scaling. Llama 4 Scout uses it with s = 16, low 1, high 1: a band of
                  no width, a hard step at lambda_i = L (Meta's and Hugging Face's code).

The statement of these formulas in Hugging Face's ``modeling_rope_utils.py`` was used as a check.
Feed the result to ``poslab.encodings.rope.apply_rotary``; multiply both q and k by the
attention scale (the logits then grow by its square), as YaRN does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from poslab.encodings._checks import require, require_even
from poslab.encodings.rope import rope_inverse_frequencies


@dataclass(frozen=True)
class RopeSchedule:
    """What a schedule returns: ``inv_freq`` float32 ``[D/2]`` and a scale for both q and k."""

    inv_freq: torch.Tensor
    attention_scale: float = 1.0


ScheduleFn = Callable[..., RopeSchedule]


def _none(head_dim, base, factor, original_len, current_len) -> RopeSchedule:
    return RopeSchedule(rope_inverse_frequencies(head_dim, base))


def _linear(head_dim, base, factor, original_len, current_len) -> RopeSchedule:
    return RopeSchedule(rope_inverse_frequencies(head_dim, base) / factor)


def _ntk_base(head_dim: int, base: float, factor: float) -> float:
    return base * factor ** (head_dim / (head_dim - 2))


def _ntk(head_dim, base, factor, original_len, current_len) -> RopeSchedule:
    return RopeSchedule(rope_inverse_frequencies(head_dim, _ntk_base(head_dim, base, factor)))


def _dynamic(head_dim, base, factor, original_len, current_len) -> RopeSchedule:
    length = max(current_len or original_len, original_len)
    effective_factor = factor * length / original_len - (factor - 1)
    return RopeSchedule(rope_inverse_frequencies(head_dim, _ntk_base(head_dim, base, effective_factor)))


def yarn_correction_dim(turns: float, head_dim: int, base: float, original_len: int) -> float:
    """The (fractional) pair index whose wavelength fits ``turns`` times into the training length."""
    return head_dim * math.log(original_len / (turns * 2 * math.pi)) / (2 * math.log(base))


def _yarn(
    head_dim, base, factor, original_len, current_len, beta_fast: float = 32.0, beta_slow: float = 1.0
) -> RopeSchedule:
    theta = rope_inverse_frequencies(head_dim, base)
    low = max(math.floor(yarn_correction_dim(beta_fast, head_dim, base, original_len)), 0)
    high = min(math.ceil(yarn_correction_dim(beta_slow, head_dim, base, original_len)), head_dim - 1)
    high = high if high > low else low + 0.001  # a zero-width ramp would divide by zero
    ramp = ((torch.arange(head_dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    # ramp 0: high frequency, kept (extrapolated); ramp 1: low frequency, interpolated.
    inv_freq = theta * (1 - ramp) + (theta / factor) * ramp
    scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return RopeSchedule(inv_freq, scale)


def _yarn_paper(
    head_dim, base, factor, original_len, current_len, beta_fast: float = 32.0, beta_slow: float = 1.0
) -> RopeSchedule:
    theta = rope_inverse_frequencies(head_dim, base)
    turns = original_len * theta.double() / (2 * math.pi)  # r_i = L / lambda_i
    keep = ((turns - beta_slow) / (beta_fast - beta_slow)).clamp(0, 1).float()
    # keep 1: many turns in L, frequency kept; keep 0: under one turn, interpolated by s.
    inv_freq = theta * keep + (theta / factor) * (1 - keep)
    scale = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return RopeSchedule(inv_freq, scale)


def _llama3(
    head_dim, base, factor, original_len, current_len, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0
) -> RopeSchedule:
    require(high_freq_factor >= low_freq_factor, "llama3 needs high_freq_factor >= low_freq_factor")
    theta = rope_inverse_frequencies(head_dim, base)
    wavelength = 2 * math.pi / theta
    if high_freq_factor == low_freq_factor:  # a band of no width (Llama 4 Scout): a hard step, as Meta's code does
        smooth = (wavelength <= original_len / low_freq_factor).to(theta.dtype)
    else:
        smooth = ((original_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0, 1)
    # smooth 0 (long wavelengths): theta / s; smooth 1 (short wavelengths): theta; linear between.
    return RopeSchedule((1 - smooth) * theta / factor + smooth * theta)


ROPE_SCHEDULES: dict[str, ScheduleFn] = {
    "none": _none,
    "linear": _linear,
    "ntk": _ntk,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "yarn_paper": _yarn_paper,
    "llama3": _llama3,
}

SCHEDULE_TITLES: dict[str, str] = {
    "none": "No scaling",
    "linear": "Position interpolation (linear)",
    "ntk": "NTK-aware",
    "dynamic": "Dynamic NTK",
    "yarn": "YaRN (code's ramp)",
    "yarn_paper": "YaRN (paper's ramp)",
    "llama3": "Llama 3.1 (llama3)",
}


def rope_schedule(
    name: str,
    head_dim: int,
    base: float = 10000.0,
    factor: float = 1.0,
    original_len: int = 4096,
    current_len: int | None = None,
    **params: float,
) -> RopeSchedule:
    """Look up ``name`` in ``ROPE_SCHEDULES`` and compute it with one signature for all."""
    require(name in ROPE_SCHEDULES, f"unknown RoPE schedule {name!r}; known: {', '.join(ROPE_SCHEDULES)}")
    require_even(head_dim, "head_dim")
    require(factor >= 1.0, f"the scale factor must be at least 1, got {factor}")
    require(
        isinstance(original_len, int) and original_len >= 1,
        f"original_len must be a positive integer, got {original_len!r}",
    )
    return ROPE_SCHEDULES[name](head_dim, base, factor, original_len, current_len, **params)
