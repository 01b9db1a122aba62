"""How far a correct float32/float16 output may sit from the float64 oracle.

Measured on correct implementations against the oracles: float64 angles; float32 frequencies from
exp/log (the PyTorch tutorial's recipe); float32 powers; division by base^(2i/d); for RoPE also the
complex (Meta's LLaMA, interleaved pairing) and rotate-half (Hugging Face, half pairing) styles.
The error of a float32 angle p * w grows like p * w * eps32; what we allow is a constant plus a
slope in the position, about four times the worst measured, and far below the smallest effect of a
known bug at the same positions. ``tests/test_suite_tolerances.py`` re-measures them and shows the
known bugs sit far above.
"""

from __future__ import annotations

import torch

SINUSOIDAL_ATOL = 1e-5  # worst measured at positions <= 10: 7.2e-7 (rounding of sin, cos, powers)
SINUSOIDAL_PER_POSITION = 2.5e-7  # worst measured: 6.7e-8 per position (float32 division by base^(2i/d))


def sinusoidal_tolerance(positions) -> torch.Tensor:
    """Per-row tolerance [len(positions), 1] for float32 tables."""
    pos = torch.as_tensor(positions, dtype=torch.float64).abs()
    return (SINUSOIDAL_ATOL + SINUSOIDAL_PER_POSITION * pos)[:, None]


ROPE_ATOL = 2.5e-6  # per unit of max |x|; worst measured at positions <= 10: 1.8e-7
ROPE_PER_POSITION = 1e-7  # per unit of max |x|; worst measured: 2.7e-8 per position (exp/log frequencies)


def rope_tolerance(positions, x_abs_max: float) -> torch.Tensor:
    """Per-row tolerance [T, 1] for float32 RoPE: the angle error times the size of the pair."""
    pos = torch.as_tensor(positions, dtype=torch.float64).abs()
    return ((ROPE_ATOL + ROPE_PER_POSITION * pos) * x_abs_max)[:, None]


# float16: one rounding of the input is shared with the oracle (it sees the float16 values), the
# output is rounded once more (half an ulp: 2^-11 relative) and a float32 rotation adds little.
# Unit: 2^-10 of the largest |x|. Measured worst over correct implementations (positions 1000 to
# 4100, D up to 128): 1.02 units, when cos/sin are rounded to float16 before the products; we allow 4.
FLOAT16_ULPS = 4.0


def float16_tolerance(x_abs_max: float) -> float:
    return FLOAT16_ULPS * 2.0 ** -10 * x_abs_max
