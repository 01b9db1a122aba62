"""What the decode tests draw and compare: one case's inputs, the truth, its tolerance and known mistakes.

A ``DecodeCase`` is one point of the spec's domain: sizes, prompt length, cache mode, window, left
padding per row, how positions are given, pairing, base, dtype and scale. ``build`` turns it into
what the student receives, and what the suite knows on its own: which tokens are real and where
they sit. Outputs of padding tokens are never compared (the spec leaves them free).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Callable

import torch

from grader.student import NotATensor
from grader.suite.expect import Fail, as_tensor, diagnose, expect, expect_shape, within
from grader.suite.inputs import randn
from grader.suite.oracles import decode_visibility, oracle_decode, oracle_rope
from grader.suite.tolerances import cached_key_tolerance, decode_tolerance

SPEC = ("decode must give every token the full causal forward: the softmax, over the keys s it sees (s <= t, "
        "within the window, not padding), of <R(p_t) q_t, R(p_s) k_s> / sqrt(D), times v_s.")
PAIRINGS = ("interleaved", "half")


@dataclass(frozen=True)
class DecodeCase:
    batch: int = 2
    heads: int = 2
    length: int = 8  # T
    dim: int = 8  # D, even
    prompt_len: int = 3  # P, 1 <= P <= T
    cache: str = "rotated"
    window: int | None = None
    pads: tuple[int, ...] | None = None  # left padding of each row's prompt; None: no attention_mask
    bool_mask: bool = False  # the attention_mask as True/False instead of 1/0
    position_ids: bool = False  # give position_ids (padding at 1, as Hugging Face's generate does)
    start: int = 0  # the position of each row's first real token (given through position_ids)
    stride: int = 1  # positions start, start + stride, ... (given through position_ids when not 1)
    pairing: str = "half"
    base: float | None = None  # None: leave the default
    dtype: torch.dtype = torch.float32
    scale: float = 1.0
    seed: int = 0

    @property
    def cached_slots(self) -> int:
        return self.length if self.window is None else min(self.window, self.length)


@dataclass(frozen=True)
class DecodeInputs:
    case: DecodeCase
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    kwargs: dict
    real: torch.Tensor  # [B, T] bool, False for padding
    positions: torch.Tensor  # [B, T] int64, each real token's position (0 for padding)

    @property
    def base(self) -> float:
        return 10000.0 if self.case.base is None else self.case.base


@cache  # the same case gives the same tensors in every grading; the tests never modify them
def build(case: DecodeCase) -> DecodeInputs:
    shape = (case.batch, case.heads, case.length, case.dim)
    q, k, v = (randn(*shape, seed=case.seed * 10 + j, dtype=case.dtype, scale=case.scale) for j in range(3))
    pads = torch.tensor(case.pads if case.pads is not None else (0,) * case.batch)
    slots = torch.arange(case.length)[None, :]
    real = slots >= pads[:, None]
    positions = torch.where(real, case.stride * (slots - pads[:, None]) + case.start, torch.zeros_like(slots))
    kwargs = {"cache": case.cache, "window": case.window, "pairing": case.pairing}
    if case.base is not None:
        kwargs["base"] = case.base
    if case.pads is not None:
        mask = real[:, : case.prompt_len]
        kwargs["attention_mask"] = mask if case.bool_mask else mask.long()
    if case.position_ids or case.start or case.stride != 1:
        kwargs["position_ids"] = torch.where(real, positions, torch.ones_like(positions))
    return DecodeInputs(case, q, k, v, kwargs, real, positions)


def single_row(inputs: DecodeInputs, row: int) -> DecodeInputs:
    """Row ``row`` alone and without its padding: what a left-padded batch must give that row."""
    pads = (inputs.case.pads or (0,) * inputs.case.batch)[row]
    case = replace(inputs.case, batch=1, length=inputs.case.length - pads, prompt_len=inputs.case.prompt_len - pads,
                   pads=None)
    alone = build(case)
    cut = (slice(row, row + 1), slice(None), slice(pads, None))
    kwargs = dict(alone.kwargs)
    if "position_ids" in kwargs:
        kwargs["position_ids"] = inputs.positions[row:row + 1, pads:]
    return replace(alone, q=inputs.q[cut], k=inputs.k[cut], v=inputs.v[cut], kwargs=kwargs,
                   positions=inputs.positions[row:row + 1, pads:])


def run(student, inputs: DecodeInputs, strict: bool = False, **changes) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's (out, cached_keys); out's shape is checked here, cached_keys' by the cache tests."""
    output = student.call("decode", inputs.q, inputs.k, inputs.v, inputs.case.prompt_len,
                          **(inputs.kwargs | changes)).output
    if isinstance(output, NotATensor) or not (isinstance(output, tuple) and len(output) == 2):
        returned = output.returned if isinstance(output, NotATensor) else f"{type(output).__name__} of {len(output)}"
        raise Fail(f"decode must return a pair (out, cached_keys); it returned {returned}.")
    out, cached_keys = (as_tensor(part, f"decode's {name}", strict)
                        for part, name in zip(output, ("out", "cached_keys")))
    expect_shape(out, inputs.q.shape, "decode's out")
    return out, cached_keys


def tolerance(inputs: DecodeInputs) -> torch.Tensor:
    return decode_tolerance(inputs.q, inputs.k, inputs.v, inputs.positions, inputs.base)


def real_only(tensor: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """The tensor with the entries of padding tokens set to 0: those are not checked."""
    return torch.where(real[:, None, :, None], tensor.double(), torch.zeros((), dtype=torch.float64))


def matches(actual: torch.Tensor, expected: torch.Tensor, inputs: DecodeInputs, scale: float = 1.0,
            first_token: int = 0) -> bool:
    """Within tolerance on the real tokens from ``first_token`` on (the decoded ones: the prompt_len)."""
    judged = inputs.real & (torch.arange(inputs.case.length) >= first_token)
    return within(real_only(actual, judged), real_only(expected, judged), scale * tolerance(inputs))


@cache
def truth(case: DecodeCase) -> torch.Tensor:
    """The oracle's out for a case, computed once per grading process."""
    return expected_out(build(case))


def expected_out(inputs: DecodeInputs, window: int | None | str = "case", visible: torch.Tensor | None = None,
                 query_positions=None, key_positions=None, pairing: str | None = None) -> torch.Tensor:
    """The oracle's out for these inputs, or for a changed reading of them (a known mistake)."""
    window = inputs.case.window if window == "case" else window
    visible = decode_visibility(inputs.real, window) if visible is None else visible
    return oracle_decode(inputs.q, inputs.k, inputs.v, visible,
                         inputs.positions if query_positions is None else query_positions,
                         inputs.positions if key_positions is None else key_positions,
                         pairing or inputs.case.pairing, inputs.base)


def expected_cached_keys(inputs: DecodeInputs, cache: str | None = None) -> torch.Tensor:
    """The last S keys, oldest first: rotated by their own positions, or raw."""
    kept = _kept(inputs)
    if (cache or inputs.case.cache) == "raw":
        return inputs.k[..., kept, :].double()
    return torch.stack([oracle_rope(inputs.k[b, :, kept], inputs.positions[b, kept], inputs.base, inputs.case.pairing)
                        for b in range(inputs.case.batch)])


def _kept(inputs: DecodeInputs) -> slice:
    return slice(inputs.case.length - inputs.case.cached_slots, None)


def expect_cached_slots(cached_keys: torch.Tensor, inputs: DecodeInputs) -> None:
    """cached_keys holds the last S keys, oldest first, judged by their lengths (whatever their rotation)."""
    case, kept = inputs.case, _kept(inputs)
    expect_shape(cached_keys, (case.batch, case.heads, case.cached_slots, case.dim),
                 "cached_keys (S = T without a window, min(W, T) with one)")
    real, keys = inputs.real[:, kept], inputs.k[..., kept, :]
    lengths = cached_keys.double().norm(dim=-1, keepdim=True)
    tolerance = cached_key_tolerance(keys, inputs.positions[:, kept], inputs.base)
    if not within(real_only(lengths, real), real_only(keys.double().norm(dim=-1, keepdim=True), real), tolerance):
        raise Fail("cached_keys must hold the keys of the last " + ("W tokens" if case.window else "T tokens") +
                   ", oldest first, one slot per token (a rotation keeps each key's length; these lengths differ).")


def _held_somewhere(cached_keys: torch.Tensor, expected: torch.Tensor, tolerance: torch.Tensor,
                    real: torch.Tensor) -> bool:
    """Every real expected slot [B, H, S, D] is one of the submission's slots [B, H, S', D], in any order."""
    gaps = (expected.double()[..., :, None, :] - cached_keys.double()[..., None, :, :]).abs().amax(-1)  # [B, H, S, S']
    found = (gaps <= tolerance).any(-1)  # tolerance [B, H, S, 1]
    return bool((found | ~real[:, None, :]).all())


def expect_cached_keys(cached_keys: torch.Tensor, inputs: DecodeInputs, cache: str, count: bool = True) -> None:
    """cached_keys holds the last S keys, rotated by their own positions or raw, as ``cache`` says.

    ``count=False`` judges only what the keys are, not how many or in which order (the window tests do).
    """
    case, kept = inputs.case, _kept(inputs)
    if count:
        expect_cached_slots(cached_keys, inputs)
    else:
        expect(cached_keys.dim() == 4 and tuple(cached_keys.shape[:2]) + tuple(cached_keys.shape[3:]) ==
               (case.batch, case.heads, case.dim), "cached_keys must be [B, H, S, D].")
    real, positions = inputs.real[:, kept], inputs.positions[:, kept]
    tolerance = cached_key_tolerance(inputs.k[..., kept, :], positions, inputs.base)
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
        hint = ("They are not the keys as given: with cache='raw' cache the keys unchanged, and rotate them by their "
                "positions only when attention reads them.")
    else:
        hint = ("They are not rotated by their own positions: position_ids[b, t] when given, else the count of real "
                "tokens before them in their row (0 at the first real token).")
    raise Fail(f"cached_keys with cache='{cache}' must hold what the cache keeps after the last token. {hint}")


def diagnosis(out: torch.Tensor, inputs: DecodeInputs) -> str:
    """' Your values match a known mistake: ...' for the real tokens, or ''."""
    wrong = {name: (lambda thunk=thunk: real_only(thunk(), inputs.real)) for name, thunk in mistakes(inputs).items()}
    return diagnose(real_only(out, inputs.real), wrong, tolerance(inputs))


def mistakes(inputs: DecodeInputs) -> dict[str, Callable[[], torch.Tensor]]:
    """Known wrong readings of the spec, as oracle outputs built only if needed."""
    case, real, positions = inputs.case, inputs.real, inputs.positions
    slots = torch.arange(case.length).expand(case.batch, case.length)
    padded, window, decoded = case.pads is not None and any(case.pads), case.window, slots >= case.prompt_len
    variants = {
        "the prompt is not masked causally: a prompt token sees the prompt tokens after it":
            lambda: expected_out(inputs, visible=decode_visibility(real, window) | (
                (slots[:, :, None] < case.prompt_len) & (slots[:, None, :] < case.prompt_len) & real[:, None, :])),
        "keys are rotated twice (before caching and again when read)":
            lambda: expected_out(inputs, key_positions=2 * positions),
        "the decoded tokens' queries are not rotated":
            lambda: expected_out(inputs, query_positions=torch.where(decoded, 0, positions)),
        "the rotation goes clockwise":
            lambda: expected_out(inputs, query_positions=-positions, key_positions=-positions),
        "the other pairing is used": lambda: expected_out(
            inputs, pairing="half" if case.pairing == "interleaved" else "interleaved"),
    }
    if case.cache == "raw":
        variants["the cached raw keys are never rotated"] = lambda: expected_out(
            inputs, key_positions=torch.zeros_like(positions))
        first_slot = torch.where(slots >= case.prompt_len, (slots - (window or case.length) + 1).clamp(min=0), 0)
        variants["the cached raw keys are rotated by their slot in the cache, not by their positions"] = (
            lambda: expected_out(inputs, key_positions=(slots[:, None, :] - first_slot[:, :, None]).clamp(min=0)))
    if padded or window:
        held = slots.clamp(max=window) if window else slots
        variants["a decoded token's position is the number of keys in the cache (that counts padding, and "
                 "stops growing in a rolling buffer)"] = lambda: expected_out(
            inputs, query_positions=torch.where(decoded, held, positions),
            key_positions=torch.where(decoded, held, positions))
    if padded:
        variants["padding keys get weight: the attention mask is not applied"] = lambda: expected_out(
            inputs, visible=decode_visibility(torch.ones_like(real), window))
        # Positions that count the padding shift a whole row alike: out cannot show it, the rotated keys do.
    if "position_ids" in inputs.kwargs:
        counted = (positions - case.start) // case.stride
        variants["the position_ids argument is ignored"] = lambda: expected_out(
            inputs, query_positions=counted, key_positions=counted)
    if window:
        variants["the window keeps W + 1 tokens"] = lambda: expected_out(inputs, window=window + 1)
        variants["the prefill's window lets one more token through (t - s <= W)"] = lambda: expected_out(
            inputs, visible=torch.where(slots[:, :, None] < case.prompt_len, decode_visibility(real, window + 1),
                                        decode_visibility(real, window)))
        if window > 1:
            variants["the window keeps W - 1 tokens"] = lambda: expected_out(inputs, window=window - 1)
        variants["the prefill ignores the window"] = lambda: expected_out(
            inputs, visible=torch.where(slots[:, :, None] < case.prompt_len, decode_visibility(real),
                                        decode_visibility(real, window)))
    return variants
