"""How far a correct ``scaled_inv_freq`` may sit from the float64 oracle (the shared error model).

Each frequency may be computed in float32 as Hugging Face does: the default w_i = b^(-2i/D) with
``frequency_relative_error``; dynamic's base b' from (s T / L - (s - 1))^(D / (D - 2)) adds a few
roundings times the exponent 2i/D; a blend (YaRN, llama3) theta (1 - r) + theta / s r adds the
ramp's own error times s (the blend's slope, relative to theta / s) and three roundings.
"""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import SAFETY, U32, frequency_relative_error, underflow

BLEND_ROUNDINGS = 3  # two products and a sum
RAMP_ROUNDINGS = 4  # (i - lo) / (hi - lo), clamped; llama3's L / lambda_i - low over high - low


def frequency_tolerance(expected: torch.Tensor, rope_type: str | None, factor: float) -> torch.Tensor:
    """Per pair: SAFETY times the first-order error of a float32 computation, plus float32's underflow."""
    relative = frequency_relative_error(expected)
    if rope_type == "dynamic":
        exponent = torch.arange(expected.shape[-1], dtype=torch.float64) * 2 / (2 * expected.shape[-1])
        relative = relative + exponent * 6 * U32  # the base: a product, a ratio, a difference, a power
    if rope_type in ("linear", "yarn", "llama3"):
        relative = relative + (BLEND_ROUNDINGS + RAMP_ROUNDINGS * factor) * U32
    return SAFETY * relative * expected.abs() + underflow(torch.float32)


def attention_tolerance(expected: float) -> float:
    """0.1 ln(s) + 1 in float32 at worst: ln, a product and a sum."""
    return SAFETY * 4 * U32 * abs(expected) + math.ulp(abs(expected))
