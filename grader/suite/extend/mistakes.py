"""The extend exercise's known mistakes: wrong frequencies a submission may return, named for the student.

Each is built lazily from the oracle's pieces (``diagnose`` builds one only when a test failed).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grader.suite.extend.domains import ExtendCase
from grader.suite.extend.oracle import (
    default_frequencies,
    dynamic_base,
    llama3_keep,
    yarn_bounds,
    yarn_ramp,
)


def _blend(theta: torch.Tensor, keep: torch.Tensor, factor: float) -> torch.Tensor:
    return theta * keep + theta / factor * (1 - keep)


def _yarn_turns_ramp(case: ExtendCase, fast: float, slow: float) -> torch.Tensor:
    """The paper's ramp, linear in the turns L / lambda_i rather than in the pair index."""
    theta = default_frequencies(case.head_dim, case.used_base)
    turns = case.original_len * theta / (2 * torch.pi)
    return ((turns - slow) / (fast - slow)).clamp(0, 1)


def _yarn_mistakes(case: ExtendCase) -> dict[str, Callable[[], torch.Tensor]]:
    params = dict(case.params)
    fast, slow = params.get("beta_fast", 32.0), params.get("beta_slow", 1.0)
    d, b, length, s = case.head_dim, case.used_base, case.original_len, case.factor
    theta = default_frequencies(d, b)
    ramp = yarn_ramp(d, b, length, fast, slow)
    low, high = yarn_bounds(d, b, length, fast, slow)
    index = torch.arange(d // 2, dtype=torch.float64)
    return {
        "the ramp is reversed: the fastest pairs are divided by s and the slowest kept": lambda: _blend(theta, ramp, s),
        "the ramp is linear in the turns L / lambda_i (the paper's), not in the pair index i (the spec's)": lambda: (
            _blend(theta, _yarn_turns_ramp(case, fast, slow), s)
        ),
        "beta_fast and beta_slow are swapped": lambda: _blend(theta, 1 - yarn_ramp(d, b, length, slow, fast), s),
        "lo and hi are not rounded (floor and ceil)": lambda: _blend(
            theta, 1 - ((index - max(low, 0)) / max(high - low, 1e-3)).clamp(0, 1), s
        ),
    }


def _llama3_mistakes(case: ExtendCase) -> dict[str, Callable[[], torch.Tensor]]:
    params = dict(case.params)
    low, high = params.get("low_freq_factor", 1.0), params.get("high_freq_factor", 4.0)
    d, b, length, s = case.head_dim, case.used_base, case.original_len, case.factor
    theta = default_frequencies(d, b)
    keep = llama3_keep(d, b, length, low, high)
    return {
        "the bands are swapped: short wavelengths divided by s, long ones kept": lambda: _blend(theta, 1 - keep, s),
        "low_freq_factor and high_freq_factor are swapped": lambda: _blend(
            theta, llama3_keep(d, b, length, high, low) if high != low else keep, s
        ),
    }


def _dynamic_mistakes(case: ExtendCase) -> dict[str, Callable[[], torch.Tensor]]:
    d, b, length, s = case.head_dim, case.used_base, case.original_len, case.factor
    used = length if case.seq_len is None else case.seq_len
    mistakes = {
        "the factor grows as s T / L (YaRN's dynamic scaling) instead of s T / L - (s - 1)": lambda: (
            default_frequencies(d, b * (s * max(used, length) / length) ** (d / (d - 2)))
        ),
        "the exponent D / (D - 2) is missing from the new base": lambda: default_frequencies(
            d, b * (s * max(used, length) / length - (s - 1))
        ),
        "the base is scaled even within the trained length (T <= L)": lambda: default_frequencies(
            d, b * s ** (d / (d - 2))
        ),
        "seq_len is ignored: the frequencies stay the default ones": lambda: default_frequencies(d, b),
        "the original length is read where it should be the current one": lambda: default_frequencies(
            d, dynamic_base(d, b, s, length, length)
        ),
    }
    if case.seq_len is None:  # no length given: T is L
        mistakes["with no seq_len, T is taken as s L (the stretched length), not L"] = lambda: default_frequencies(
            d, dynamic_base(d, b, s, length, round(s * length))
        )
    return mistakes


def frequency_mistakes(case: ExtendCase) -> dict[str, Callable[[], torch.Tensor]]:
    d, b, s = case.head_dim, case.used_base, case.factor
    theta = default_frequencies(d, b)
    common = {
        "the exponent is i/D instead of 2i/D": lambda: b ** (-torch.arange(d // 2, dtype=torch.float64) / d),
        "the frequencies are multiplied by s instead of divided": lambda: theta * s,
        "these are the default frequencies, as if the scaling were ignored": lambda: theta,
        "every frequency is divided by s, as linear does": lambda: theta / s,
    }
    by_type = {"yarn": _yarn_mistakes, "llama3": _llama3_mistakes, "dynamic": _dynamic_mistakes}
    # A type's own mistakes first: where one gives the same values as a generic one, it is the likelier cause.
    return (by_type[case.rope_type](case) if case.rope_type in by_type else {}) | common
