"""Helpers for the hidden tests: failures, seeded inputs, float64 oracles and tolerances.

The oracles below are written from the papers' formulas, in float64, independently of
``poslab.encodings``: the suite then checks the reference too (it must score full marks).
Every tolerance is a measured float32/float16 error with a margin; ``tests/test_suite_tolerances.py``
re-measures them on several correct float32 implementations and shows the known bugs sit far above.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch

from grader.suite.student import Student, TensorInfo

MINUS_INF = float("-inf")


class Fail(AssertionError):
    """A property does not hold; the message is the sentence the student reads."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Fail(message)


# ----------------------------------------------------------------------------------- outputs


def as_tensor(value: object, what: str) -> torch.Tensor:
    """The student's output as a tensor, or a Fail naming what was expected."""
    expect(isinstance(value, torch.Tensor), f"{what} must return a torch.Tensor, got {type(value).__name__}.")
    return value


def as_info(value: object, what: str) -> TensorInfo:
    expect(isinstance(value, TensorInfo), f"{what} must return a tensor, got {type(value).__name__}.")
    return value


def as_pair(value: object, what: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``attention`` returns ``(out, weights)``; anything else fails with that sentence."""
    expect(isinstance(value, tuple) and len(value) == 2,
           f"{what} must return a pair (out, weights); got {type(value).__name__}"
           + (f" of length {len(value)}" if isinstance(value, tuple) else "") + ".")
    return value


def expect_shape(tensor: torch.Tensor | TensorInfo, shape: Iterable[int], what: str) -> None:
    """Fail if the shapes differ, saying which axis without naming the hidden sizes."""
    expected, actual = tuple(shape), tuple(tensor.shape)
    if actual == expected:
        return
    if len(actual) != len(expected):
        raise Fail(f"{what} has {len(actual)} axes where the spec gives {len(expected)}.")
    axis = next(i for i, (a, e) in enumerate(zip(actual, expected)) if a != e)
    raise Fail(f"{what} has the wrong size along axis {axis} (axis {axis - len(expected)} from the end).")


def dtype_name(tensor: torch.Tensor | TensorInfo) -> str:
    return tensor.dtype if isinstance(tensor, TensorInfo) else str(tensor.dtype).removeprefix("torch.")


def expect_dtype(tensor: torch.Tensor | TensorInfo, dtype: torch.dtype, what: str) -> None:
    wanted = str(dtype).removeprefix("torch.")
    expect(dtype_name(tensor) == wanted, f"{what} is {dtype_name(tensor)}, expected {wanted}.")


def expect_finite(tensor: torch.Tensor, what: str) -> None:
    expect(bool(torch.isfinite(tensor).all()), f"{what} contains NaN or infinity.")


def within(actual: torch.Tensor, expected: torch.Tensor, tolerance: float | torch.Tensor) -> bool:
    """``|actual - expected| <= tolerance`` everywhere (tolerance may be per entry); False on shape mismatch."""
    if tuple(actual.shape) != tuple(expected.shape):
        return False
    diff = (actual.double() - expected.double()).abs()
    return bool((diff <= tolerance).all())


def first_match(actual: torch.Tensor, candidates: dict[str, torch.Tensor], tolerance) -> str | None:
    """The name of the first candidate ``actual`` matches within tolerance, else None."""
    for name, expected in candidates.items():
        if within(actual, expected, tolerance):
            return name
    return None


def diagnose(actual: torch.Tensor, wrong_variants: dict[str, Callable[[], torch.Tensor]], tolerance) -> str:
    """A sentence naming the known misconception ``actual`` reproduces, or '' if none.

    Variants are built lazily: most submissions are right and never need them.
    """
    for misconception, build in wrong_variants.items():
        if within(actual, build(), tolerance):
            return f" Your values match a known mistake: {misconception}."
    return ""


def expect_untouched(after: tuple, before: Iterable[torch.Tensor], what: str) -> None:
    """The tensors the submission received are unchanged after the call (no in-place edits)."""
    for seen, original in zip(after, before):
        if seen is None:  # meta tensors have no values to compare
            continue
        expect(tuple(seen.shape) == tuple(original.shape) and bool(torch.equal(seen, original)),
               f"{what} modified its input in place (e.g. +=, /=, masked_fill_, copy_). "
               "Callers keep using their tensors: compute a new one instead.")


# ----------------------------------------------------------------------------------- inputs


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, generator=generator(seed), dtype=torch.float64) * scale).to(dtype)


def permutation(n: int, seed: int) -> torch.Tensor:
    """A random order of ``range(n)`` that moves at least one index (a real permutation)."""
    gen = generator(seed)
    order = torch.randperm(n, generator=gen)
    while n > 1 and torch.equal(order, torch.arange(n)):
        order = torch.randperm(n, generator=gen)
    return order


def meta(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(*shape, dtype=dtype, device="meta")


# ----------------------------------------------------------------------------------- oracles


def oracle_attention(q, k, v, bias=None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(D) + bias) v in float64 (Vaswani et al. 2017, eq. 1)."""
    q, k, v = q.double(), k.double(), v.double()
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.double()
    # Subtracting the row maximum keeps exp finite; masked (-inf) entries become exactly 0.
    top = scores.amax(-1, keepdim=True)
    weights = (scores - top).exp()
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def sinusoid_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """omega_i = base^(-2i/d), i = 0 .. d/2 - 1 (Vaswani et al. 2017, section 3.5)."""
    return torch.tensor([base ** (-2.0 * i / d_model) for i in range(d_model // 2)], dtype=torch.float64)


SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")


def oracle_sinusoidal(positions, d_model: int, base: float = 10000.0, layout: str = "interleaved",
                      frequencies: torch.Tensor | None = None) -> torch.Tensor:
    """Rows of the table at ``positions``, float64.

    ``interleaved``: columns sin w0, cos w0, sin w1, cos w1, ...; ``concatenated``: all sin, then all cos.
    """
    omega = sinusoid_frequencies(d_model, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega[None, :]
    sin, cos = angles.sin(), angles.cos()
    if layout == "interleaved":
        return torch.stack([sin, cos], dim=-1).reshape(len(angles), -1)
    return torch.cat([sin, cos], dim=-1)


def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base^(-2i/D) (Su et al., RoFormer, 2021)."""
    return sinusoid_frequencies(head_dim, base)


ROPE_PAIRINGS = ("pairs", "halves")


def oracle_rope(x: torch.Tensor, positions, base: float = 10000.0, pairing: str = "pairs",
                frequencies: torch.Tensor | None = None, clockwise: bool = False) -> torch.Tensor:
    """x [..., T, D] rotated pair by pair, counter-clockwise by positions[t] * theta_i, float64.

    ``pairs``: (x[2i], x[2i+1]); ``halves``: (x[i], x[i + D/2]).
    """
    x = x.double()
    head_dim = x.shape[-1]
    theta = rope_frequencies(head_dim, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * theta[None, :]  # (T, D/2)
    cos, sin = angles.cos(), angles.sin()
    if clockwise:
        sin = -sin
    if pairing == "pairs":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : head_dim // 2], x[..., head_dim // 2:]
    new_a, new_b = a * cos - b * sin, a * sin + b * cos
    if pairing == "pairs":
        return torch.stack([new_a, new_b], dim=-1).flatten(-2)
    return torch.cat([new_a, new_b], dim=-1)


def oracle_alibi_slopes(n_heads: int) -> torch.Tensor:
    """Press et al. 2022, section 3 and their reference code, float64.

    n a power of two: the geometric sequence starting at 2^(-8/n) with that ratio.
    Otherwise: the slopes of the closest power of two c below n, then every other slope of 2c.
    """
    def geometric(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (h + 1) for h in range(n)]

    closest = 1 << (n_heads.bit_length() - 1)
    extra = geometric(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(geometric(closest) + extra, dtype=torch.float64)


def oracle_alibi_bias(n_heads: int, seq_len: int, slopes: torch.Tensor | None = None) -> torch.Tensor:
    """[H, T, T] float64: -m_h (i - j) for j <= i, -inf for j > i."""
    m = oracle_alibi_slopes(n_heads) if slopes is None else slopes.double()
    bias = torch.empty(n_heads, seq_len, seq_len, dtype=torch.float64)
    for i in range(seq_len):
        for j in range(seq_len):
            bias[:, i, j] = -m * (i - j) if j <= i else MINUS_INF
    return bias


# ----------------------------------------------------------------------------------- tolerances
#
# Measured (and re-checked by tests/test_suite_tolerances.py) on correct implementations against
# these oracles: float64 angles; float32 frequencies from exp/log (the PyTorch tutorial's recipe);
# float32 powers; division by base^(2i/d); for RoPE also complex (LLaMA) and half-split (Hugging
# Face) styles. The error of a float32 angle p * w grows like p * w * eps32; what we allow is a
# constant plus a slope in the position, about four times the worst measured, and far below the
# smallest effect of a known bug at the same positions.

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


def half_tolerance(x_abs_max: float) -> float:
    return FLOAT16_ULPS * 2.0 ** -10 * x_abs_max


# ----------------------------------------------------------------------------------- timing


def seconds_of(fn: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` runs: noise from other processes only ever adds time."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# A vectorised submission runs within a few times the reference; a Python loop over positions is
# 100x to 1000x slower on an idle machine. On a busy one (load 6 on 2 cores, measured) the
# multi-threaded reference slowed down up to 25x and a loop only ~3x, so the speed tests use sizes
# with many positions and little work per position, where a loop still misses the budget by 4x.
# The floor absorbs copying the output across the sandbox.
SPEED_FACTOR = 20.0
SPEED_FLOOR_SECONDS = 0.25


def speed_budget(reference_seconds: float) -> float:
    return SPEED_FLOOR_SECONDS + SPEED_FACTOR * reference_seconds


@dataclass(frozen=True)
class _ReferenceCall:
    key: str  # what is timed: the op and its arguments
    run: Callable[[], object] = field(compare=False, hash=False)


@functools.lru_cache(maxsize=64)
def _reference_seconds(call: _ReferenceCall) -> float:
    """The reference's time, measured once per grading run (process), not once per submission:
    re-timing it for every submission cost ~0.1 s of a ~0.25 s suite."""
    return seconds_of(call.run, repeats=5)


def expect_fast(student: Student, op: str, reference: Callable[[], object], *args, **kwargs) -> None:
    """The student's ``op(*args, **kwargs)`` runs within the budget set by the reference, timed in this run."""
    reference_seconds = _reference_seconds(_ReferenceCall(f"{op}{args}{sorted(kwargs.items())}", reference))
    budget = speed_budget(reference_seconds)
    overhead = student.call_overhead_seconds()
    best = student.call(op, *args, **kwargs).wall_seconds - overhead
    if budget < best < 3 * budget:  # a second chance, in case the machine was busy
        best = min(best, student.call(op, *args, **kwargs).wall_seconds - overhead)
    expect(best <= budget,
           f"{op} took {best:.2f} s where the reference takes {reference_seconds:.3f} s (allowed: "
           f"{budget:.2f} s). Compute all positions at once with tensor operations (torch.arange, "
           "outer products, broadcasting) instead of a Python loop over positions.")
