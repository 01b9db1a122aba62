"""The decode exercise's checks of the cache: which keys it holds, rotated or raw, after each step."""

from __future__ import annotations

import torch

from grader.student import NotATensor
from grader.suite.decode.cases import DecodeInputs, cached, real_only
from grader.suite.decode.tolerances import cached_key_tolerance, length_tolerance
from grader.suite.expect import Fail, expect_shape, within
from grader.suite.rope.oracle import oracle_rope


def expected_cached_keys(inputs: DecodeInputs, cache: str | None = None) -> torch.Tensor:
    """The last S keys, oldest first: rotated by their own positions, or raw."""
    kept = _kept(inputs)
    if (cache or inputs.case.cache) == "raw":
        return inputs.k[..., kept, :].double()
    return torch.stack(
        [
            oracle_rope(inputs.k[b, :, kept], inputs.positions[b, kept], inputs.base, inputs.case.pairing)
            for b in range(inputs.case.batch)
        ]
    )


def _kept(inputs: DecodeInputs) -> slice:
    return slice(inputs.case.length - inputs.case.cached_slots, None)


def expect_cached_slots(cached_keys: object, inputs: DecodeInputs) -> None:
    """cached_keys holds the last S keys, oldest first, judged by their lengths (whatever their rotation)."""
    case, kept, cached_keys = inputs.case, _kept(inputs), cached(cached_keys)
    expect_shape(
        cached_keys,
        (case.batch, case.heads, case.cached_slots, case.dim),
        "cached_keys (S = T without a window, min(W, T) with one)",
    )
    real, keys = inputs.real[:, kept], inputs.k[..., kept, :]
    lengths = cached_keys.double().norm(dim=-1, keepdim=True)
    if not within(
        real_only(lengths, real),
        real_only(keys.double().norm(dim=-1, keepdim=True), real),
        length_tolerance(keys),
    ):
        raise Fail(
            "cached_keys must hold the keys of the last "
            + ("W tokens" if case.window else "T tokens")
            + ", oldest first, one slot per token (a rotation keeps each key's length; these lengths differ)."
        )


def _held_somewhere(
    cached_keys: torch.Tensor, expected: torch.Tensor, tolerance: torch.Tensor, real: torch.Tensor
) -> bool:
    """Every real expected slot [B, H, S, D] is one of the submission's slots [B, H, S', D], in any order
    (within the tolerance [B, H, S, D] of the expected slot)."""
    gaps = (expected.double()[..., :, None, :] - cached_keys.double()[..., None, :, :]).abs()  # [B, H, S, S', D]
    found = (gaps <= tolerance[..., :, None, :]).all(-1).any(-1)  # tolerance [B, H, S, D]
    return bool((found | ~real[:, None, :]).all())


def expect_cached_keys(cached_keys: object, inputs: DecodeInputs, cache: str, count: bool = True) -> None:
    """cached_keys holds the last S keys, rotated by their own positions or raw, as ``cache`` says.

    ``count=False`` judges only what the keys are, not how many or in which order (the window tests do),
    and nothing when they are not a [B, H, S, D] tensor (the type, shape and mode tests say so).
    """
    case, kept = inputs.case, _kept(inputs)
    if count:
        cached_keys = cached(cached_keys)
        expect_cached_slots(cached_keys, inputs)
    else:
        values = cached_keys.values if isinstance(cached_keys, NotATensor) else cached_keys
        if not (
            isinstance(values, torch.Tensor)
            and values.dim() == 4
            and (values.shape[0], values.shape[1], values.shape[3]) == (case.batch, case.heads, case.dim)
        ):
            return
        cached_keys = values
    real, positions = inputs.real[:, kept], inputs.positions[:, kept]
    tolerance = cached_key_tolerance(inputs.k[..., kept, :], positions, inputs.base, case.pairing)
    if count:

        def holds(expected):
            return within(real_only(cached_keys, real), real_only(expected, real), tolerance)
    else:
        newest = min(case.cached_slots, cached_keys.shape[-2])  # a smaller cache is judged on its newest keys
        real, tolerance = real[:, -newest:], tolerance[..., -newest:, :]

        def holds(expected):
            return _held_somewhere(cached_keys, expected[..., -newest:, :], tolerance, real)

    if holds(expected_cached_keys(inputs, cache)):
        return
    if cache == "rotated" and holds(expected_cached_keys(inputs, "raw")):
        hint = "They are the raw keys: with cache='rotated' rotate each key by its position before caching it."
    elif cache == "raw":
        hint = (
            "They are not the keys as given: with cache='raw' cache the keys unchanged, and rotate them by their "
            "positions only when attention reads them."
        )
    else:
        hint = (
            "They are not rotated by their own positions: position_ids[b, t] when given, else the count of real "
            "tokens before them in their row (0 at the first real token)."
        )
    raise Fail(f"cached_keys with cache='{cache}' must hold what the cache keeps after the last token. {hint}")
