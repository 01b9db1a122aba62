"""Hidden tests of ``apply_rope(x, positions=None, base=10000.0)``: 20 points.

Two pairings are accepted, both rotating counter-clockwise by p * theta_i, theta_i = base^(-2i/D):
``interleaved`` (x[2i], x[2i+1]) as in RoFormer and Meta's LLaMA, and ``half`` (x[i], x[i + D/2])
as in GPT-NeoX and Hugging Face. An output passes a value probe when it matches one of the two
everywhere, within the error model of each entry (``rope_tolerance``: the float32
angle's error, which grows with the position, times the pair's size, plus the roundings of x's
dtype). The hidden value test draws shapes, dtypes, positions and bases (``domains_positions``).
"""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, for_each
from grader.suite.expect import (
    as_info,
    as_tensor,
    diagnose,
    expect,
    expect_dtype,
    expect_shape,
    on_meta_device,
    within,
)
from grader.suite.inputs import meta, randn
from grader.suite.rope.domains import rotary_cases
from grader.suite.rope.oracle import ROPE_PAIRINGS, oracle_rope
from grader.suite.rope.tolerances import dot_tolerance, norm_relative_tolerance, rope_tolerance

# How a student reads each pairing in a message: the name, then which coordinates it pairs.
PAIRING_IN_WORDS = {
    "interleaved": "with the interleaved pairing (x[2i], x[2i+1])",
    "half": "with the half pairing (x[i], x[i + D/2])",
}

SPEC = (
    "apply_rope must rotate each feature pair, with the interleaved pairing (x[2i], x[2i+1]) or the half "
    "pairing (x[i], x[i + D/2]), counter-clockwise by the angle p * base^(-2i/D), p the token's position."
)


def _rope(student, x, strict: bool = False, key: tuple | None = None, **kwargs) -> torch.Tensor:
    output = student.apply_rope(x, **kwargs) if key is None else answer(student, key, "apply_rope", x, **kwargs).output
    out = as_tensor(output, "apply_rope", strict)
    expect_shape(out, x.shape, "apply_rope(x)")
    return out


def _tolerances(x: torch.Tensor, positions, base: float) -> dict[str, torch.Tensor]:
    return {pairing: rope_tolerance(x, positions, base, pairing) for pairing in ROPE_PAIRINGS}


def _expectations(x: torch.Tensor, positions, base: float) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    tolerances = _tolerances(x, positions, base)
    return {pairing: (oracle_rope(x, positions, base, pairing), tolerances[pairing]) for pairing in ROPE_PAIRINGS}


@lru_cache(maxsize=32)
def _drawn_expectations(case) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """A drawn case's oracle and tolerance per pairing: the same for every submission graded in this process."""
    return _expectations(case.x(), case.used_positions(), case.used_base)


def _matching_pairing(out: torch.Tensor, x: torch.Tensor, positions, base: float, expectations=None) -> str | None:
    for pairing, (expected, tolerance) in (expectations or _expectations(x, positions, base)).items():
        if within(out, expected, tolerance):
            return pairing
    return None


def _mistakes(x, positions, base: float, explicit_positions: bool) -> dict:
    """Known wrong rotations, in both pairings, built only if needed."""
    head_dim = x.shape[-1]
    default = torch.arange(x.shape[-2])
    variants = {}
    for pairing in ROPE_PAIRINGS:
        words = PAIRING_IN_WORDS[pairing]

        def rotated(pairing=pairing, **changes):
            arguments = dict(positions=positions, base=base, pairing=pairing) | changes
            return lambda: oracle_rope(x, **arguments)

        variants[f"the rotation goes clockwise: the sign of sin is flipped, {words}"] = rotated(clockwise=True)
        variants[f"the exponent is i/D instead of 2i/D, {words}"] = rotated(
            frequencies=torch.tensor([base ** (-i / head_dim) for i in range(head_dim // 2)], dtype=torch.float64)
        )
        variants[f"every pair is rotated by the same angle, {words}"] = rotated(
            frequencies=torch.ones(head_dim // 2, dtype=torch.float64)
        )
        if explicit_positions:
            variants[f"the positions argument is ignored, {words}"] = rotated(positions=default)
        else:
            variants[f"positions start at 1 instead of 0, {words}"] = rotated(positions=default + 1)
        if base == 10000.0:
            variants[f"the default base is 500000 instead of 10000, {words}"] = rotated(base=500000.0)
    return variants


def _rope_kwargs(positions, base: float | None) -> dict:
    return ({} if positions is None else {"positions": positions}) | ({} if base is None else {"base": base})


def _expect_rotation(
    student, x: torch.Tensor, positions=None, base: float | None = None, key: tuple | None = None, expectations=None
) -> None:
    kwargs = _rope_kwargs(positions, base)
    out = _rope(student, x, key=key, **kwargs)
    base = 10000.0 if base is None else base
    used = torch.arange(x.shape[-2]) if positions is None else positions.long()
    if _matching_pairing(out, x, used, base, expectations) is None:
        loosest = torch.maximum(*_tolerances(x, used, base).values())
        raise AssertionError(SPEC + diagnose(out, _mistakes(x, used, base, positions is not None), loosest))


@graded(points=2, family="dtype_device", visibility=VISIBLE)
def test_shape_and_dtype_kept(student):
    """apply_rope keeps x's shape [..., T, D] and dtype (float32, float64, float16)."""
    for dtype in (torch.float32, torch.float64, torch.float16):
        out = _rope(student, randn(2, 3, 5, 8, seed=401, dtype=dtype), strict=True)  # the type test
        expect_dtype(out, dtype, f"apply_rope of a {str(dtype).removeprefix('torch.')} x")
    for shape in ((5, 8), (4, 5, 8)):
        _rope(student, randn(*shape, seed=402))


@graded(points=1, family="dtype_device", visibility=HIDDEN)
def test_meta_device(student):
    """apply_rope keeps x's device."""
    output = on_meta_device(
        lambda: student.apply_rope(meta(2, 4, 6, 8)), lambda: student.apply_rope(randn(2, 4, 6, 8, seed=403))
    )
    if output is None:
        return  # the code reads values: the meta device cannot tell its devices (expect.on_meta_device)
    out = as_info(output, "apply_rope on another device")
    expect(
        out.device == "meta",
        "apply_rope must return a tensor on x's device (a GPU, say): build positions and "
        "frequencies with device=x.device.",
    )
    expect_shape(out, (2, 4, 6, 8), "apply_rope(x) on another device")


@graded(points=1, family="identity", visibility=VISIBLE)
def test_position_zero_is_identity(student):
    """At position 0 every angle is 0: the vector comes back unchanged."""
    x = randn(1, 3, 1, 6, seed=411)
    expect(
        within(_rope(student, x), x, _loosest(x, [0], 10000.0)),
        "With T = 1 the only token sits at position 0 and must come back unchanged: positions start at 0.",
    )
    x = randn(1, 2, 4, 8, seed=412)
    expect(
        within(_rope(student, x, positions=torch.zeros(4, dtype=torch.long)), x, _loosest(x, [0] * 4, 10000.0)),
        "With positions all 0 the vectors must come back unchanged: use the positions argument when given.",
    )


@graded(points=2, family="norm", visibility=VISIBLE)
def test_norm_preserved(student):
    """RoPE is a rotation: it keeps the length of every vector."""
    x = randn(2, 2, 50, 16, seed=421)
    out = _rope(student, x)
    norms, expected = out.double().norm(dim=-1), x.double().norm(dim=-1)
    expect(
        bool(((norms - expected).abs() <= norm_relative_tolerance(x.dtype) * expected).all()),
        "apply_rope must not change the length of any vector: rotate each pair of features with "
        "(cos, -sin; sin, cos) using the same angle for both features of a pair.",
    )


def _loosest(x: torch.Tensor, positions, base: float) -> torch.Tensor:
    return torch.maximum(*_tolerances(x, positions, base).values())


def _offset_vectors() -> tuple[torch.Tensor, torch.Tensor]:
    """q and k of the offset test, (B, H, T=1, D)."""
    return randn(1, 1, 1, 32, seed=431), randn(1, 1, 1, 32, seed=432)


@lru_cache(maxsize=8)
def _offset_tolerances(m: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each entry's tolerance for q at m and k at n: the same in every grading of this process."""
    q, k = _offset_vectors()
    return _loosest(q, [m], 10000.0), _loosest(k, [n], 10000.0)


def _score(student, m: int, n: int) -> tuple[float, float]:
    """<rope(q, m), rope(k, n)> and how far rounding may move it (the error model of each entry).
    q and k go in as the two tokens of one call, at positions m and n."""
    both = _rope(student, torch.cat(_offset_vectors(), dim=-2), positions=torch.tensor([m, n]))
    rotated_q, rotated_k = both[..., :1, :], both[..., 1:, :]
    q_tolerance, k_tolerance = _offset_tolerances(m, n)
    margin = dot_tolerance(rotated_q, q_tolerance, rotated_k, k_tolerance)
    return float((rotated_q.double() * rotated_k.double()).sum()), float(margin.sum())


@graded(points=2, family="relative", visibility=VISIBLE)
def test_scores_depend_only_on_offset(student):
    """<rope(q, m), rope(k, n)> depends only on m - n, and does change with it."""
    scored = [_score(student, m, m + 7) for m in (3, 40, 503)]
    scores = [score for score, _ in scored]
    # Two scores may differ by the sum of their margins.
    expect(
        max(scores) - min(scores) <= 2 * max(margin for _, margin in scored),
        "<rope(q, m), rope(k, n)> must depend only on m - n: rotate q and k by the same rule, each by "
        "its own position times the same frequencies.",
    )
    others = (_score(student, 3, 3), _score(student, 10, 3))  # offsets 0 and +7 vs -7
    rounding = 2 * max(margin for _, margin in (*scored, *others))  # what rounding alone may change
    change = min(abs(other - scores[0]) for other, _ in others)
    expect(
        change > rounding,
        f"<rope(q, m), rope(k, n)> changed by {change:.2g} when the offset m - n changed from -7 to 0 or +7, "
        f"no more than rounding may ({rounding:.2g}): are the positions used?",
    )


@graded(points=3, family="values", visibility=VISIBLE)
def test_values_small_positions(student):
    """apply_rope matches the rotation formula at positions 0 .. T-1."""
    _expect_rotation(student, randn(1, 2, 6, 8, seed=441))


@graded(points=4, family="values", visibility=HIDDEN)
@for_each(rotary_cases(dtypes=("float32", "float64")), count=12)
def test_values_explicit_positions_and_base(student, case):
    """apply_rope matches the formula for any leading axes, T, even D, int64/int32 positions up to 32,768 and base."""
    _expect_rotation(
        student,
        case.x(),
        case.position_tensor(),
        case.base,
        key=("values", case),
        expectations=_drawn_expectations(case),
    )


@graded(points=2, family="half_precision", visibility=VISIBLE)
def test_half_precision_thousands(student):
    """In float16, positions in the thousands still rotate by the right angle (compute the angles in float32)."""
    x = randn(1, 2, 6, 32, seed=461).half()
    positions = torch.tensor([1000, 1500, 2048, 3000, 4095, 4100])
    out = _rope(student, x, positions=positions)
    expect_dtype(out, torch.float16, "apply_rope of a float16 x")
    single = _rope(student, x.float(), positions=positions)
    if _matching_pairing(single, x.float(), positions, 10000.0) is None:
        # Wrong in float32 already (the value tests take those points): here only float16 must agree with it.
        close = within(out, single, _loosest(x, positions, 10000.0) + _loosest(x.float(), positions, 10000.0))
    else:
        close = _matching_pairing(out, x, positions, 10000.0) is not None
    expect(
        close,
        "For a float16 x at positions in the thousands the rotation is off: float16 cannot hold "
        "p * theta precisely (3000.5 rounds to 3000). Compute the angles, cos and sin in float32 "
        "(or float64) and cast the result back to x's dtype.",
    )
