"""The error model: how far a correct output may sit from the float64 oracle, derived, not tuned.

Every numeric comparison of the suite takes its tolerance from here. Each bound follows a correct
computation step by step (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 2-3):

* one rounding of a value x to a dtype costs at most ``u |x| + eta`` (``u`` the dtype's unit
  roundoff, 2^-11 float16, 2^-24 float32, 2^-53 float64; ``eta`` half its smallest subnormal);
* a sum of n terms carries at most ``n u sum |terms|``; a dot product of length D at most
  ``(D + 2) u sum |a_d b_d|``; a product adds the relative errors of its factors;
* a function of a perturbed input moves by at most ``|f'| |dx|``: sin and cos by the angle's error,
  exp by its argument's error times its value, softmax weights by twice the largest logit error
  (relative), a rotation by the angle's error times the vector's size;
* libm's sin, cos, exp, log and pow are within about one ulp (one more ``u``);
* the oracle's own float64 error is added to the computation's (``2^-53`` in every ``u``).

Where a spec lets a correct implementation compute in float32 (frequencies and angles, RoPE for any
input dtype as Meta's LLaMA and Hugging Face do), the model uses float32 for that step whatever
the input dtype. The first-order bound is multiplied by ``SAFETY`` = 2. ``grader/README.md`` writes
the model out; ``tests/test_metamorphic.py`` grades a family of correct implementations with it.
"""

from __future__ import annotations

import torch

SAFETY = 2.0
U64 = 2.0**-53


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half the distance from 1 to the next number of ``dtype``, plus the float64 oracle's own."""
    return float(torch.finfo(dtype).eps) / 2 + U64


def underflow(dtype: torch.dtype) -> float:
    """Half the smallest subnormal of ``dtype``: the absolute error of a rounding near 0."""
    info = torch.finfo(dtype)
    return float(info.smallest_normal) * float(info.eps) / 2


U32 = unit_roundoff(torch.float32)


def work_roundoff(dtype: torch.dtype) -> float:
    """The roundoff of the arithmetic a correct implementation may use for inputs of ``dtype``:
    float32 at least, whatever the input (Hugging Face's T5 takes its softmax in float32, Meta's
    LLaMA its RoPE), else the dtype's own."""
    return max(unit_roundoff(dtype), U32)


def as_float64(values) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        return values.double()
    return torch.tensor(values, dtype=torch.float64)


# ---- frequencies and angles (sinusoidal, RoPE): w_i = base^(-2i/d) in float32 at worst


def frequency_relative_error(frequencies: torch.Tensor) -> torch.Tensor:
    """Relative error of each float32 w_i = base^(-2i/d), given in order of i: exp(-(2i/d) ln base) rounds
    the exponent three times (ln, the ratio, the product), and exp turns that absolute error into a
    relative one (times |ln w|); exp, the cast and a division add a few roundings (pow and 1/b^(2i/d)
    do better). A running product r^i (llama.cpp's theta *= theta_scale) rounds i products and
    multiplies the ratio's own error by i: 2i more."""
    index = torch.arange(frequencies.shape[-1], dtype=torch.float64)
    return (3 * frequencies.log().abs() + 3 + 2 * index) * U32


def angle_error(positions, frequencies: torch.Tensor) -> torch.Tensor:
    """[..., T, F] for positions [..., T]: error of the angle p * w in float32 (the frequency's error, one rounding of the product)."""
    w = frequencies.double()
    return as_float64(positions).abs()[..., None] * w * (frequency_relative_error(w) + U32)


# ---- attention: softmax(q k^T / sqrt(D) + bias) v


# ---- RoPE: each pair (a, b) rotated by p * theta_i


def pair_halves(x: torch.Tensor, pairing: str) -> tuple[torch.Tensor, torch.Tensor]:
    if pairing == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def join_pairs(a: torch.Tensor, b: torch.Tensor, pairing: str) -> torch.Tensor:
    if pairing == "interleaved":
        return torch.stack([a, b], dim=-1).flatten(-2)
    return torch.cat([a, b], dim=-1)


# ---- sums of products of compared values


# ---- exact additions and scalings (learned, ALiBi)


# ---- T5: where a float32 logarithm may round a bucket either way


# ---- decode: one RoPE attention layer with a KV cache, composed from the pieces above
