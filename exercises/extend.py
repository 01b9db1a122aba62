"""Context extension for RoPE: the inverse frequencies of a model stretched past its trained length, as
Hugging Face's rope_scaling configs state them.

    scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None) -> (inv_freq, attention_factor)

    head_dim  D, an even int >= 4
    base      b > 1 (float)
    scaling   None (meaning "default"), or a dict with
                rope_type                         "default", "linear", "dynamic", "yarn" or "llama3"
                factor                            s >= 1, how far the context is stretched
                original_max_position_embeddings  L, the trained length (int >= 1)
              and the type's own keys, each optional, with these defaults:
                yarn:    beta_fast = 32, beta_slow = 1, attention_factor (see below)
                llama3:  low_freq_factor = 1, high_freq_factor = 4   (low <= high)
    seq_len   the current length T (int >= 1), read by "dynamic" only; None means L
    returns   inv_freq: a float32 tensor [D/2]; attention_factor: a Python float (not a numpy or tensor scalar)

    theta_i = b^(-2i/D), i = 0 .. D/2 - 1; the wavelength of pair i is lambda_i = 2 pi / theta_i
    default:  theta_i
    linear:   theta_i / s                                   (position interpolation)
    dynamic:  theta_i while T <= L; for T > L the base grows to
              b' = b (s T / L - (s - 1))^(D / (D - 2)) and the frequencies are b'^(-2i/D)
    yarn:     d(n) = D ln(L / (2 pi n)) / (2 ln b), the pair that turns n times in L positions
              lo = max(floor(d(beta_fast)), 0), hi = min(ceil(d(beta_slow)), D - 1); if hi <= lo, hi = lo + 0.001
              r_i = clamp((i - lo) / (hi - lo), 0, 1);  theta_i (1 - r_i) + (theta_i / s) r_i
    llama3:   theta_i where lambda_i < L / high_freq_factor; theta_i / s where lambda_i > L / low_freq_factor;
              between, with u = (L / lambda_i - low) / (high - low): (1 - u) theta_i / s + u theta_i;
              when low == high, a step: theta_i for lambda_i <= L / low, theta_i / s beyond
    attention_factor: 1.0, except yarn: scaling["attention_factor"] when given, else 0.1 ln(s) + 1

Rules:
- A factor of 1 changes nothing: the default frequencies, and attention_factor 1.0 unless a yarn config
  gives one; for dynamic while T <= L (beyond L its formula still stretches, by T / L).
- Raise ValueError for an unknown rope_type, a factor below 1, or an odd head_dim.
- Do not modify the scaling dict.
"""

from __future__ import annotations

import math  # noqa: F401 -- yarn's d(n) needs math.log, math.floor and math.ceil

import torch


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling`` (see the module docstring)."""
    raise NotImplementedError("scaled_inv_freq is not implemented yet")
