"""What the decode tests draw and compare: one case's inputs, the truth, its tolerance and known mistakes.

A ``DecodeCase`` is one point of the spec's domain: sizes, prompt length, cache mode, window, left
padding per row, how positions are given, pairing, base, dtype and scale. ``build`` turns it into
what the student receives, and what the suite knows on its own: which tokens are real and where
they sit. Outputs of padding tokens are never compared (the spec leaves them free).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import torch

from grader.student import CallResult, NotATensor
from grader.suite.decode.domains import DecodeCase
from grader.suite.decode.oracle import decode_visibility, oracle_decode
from grader.suite.decode.tolerances import decode_tolerance
from grader.suite.draw import answer, expect_inputs_left
from grader.suite.expect import Fail, as_tensor, expect_shape, within
from grader.suite.inputs import generator, randn

SPEC = (
    "decode must give every token the full causal forward: the softmax, over the keys s it sees (s <= t, "
    "within the window, not padding), of <R(p_t) q_t, R(p_s) k_s> / sqrt(D), times v_s."
)


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


CHOICE_DEFAULTS = {"cache": "rotated", "window": None, "pairing": "half"}  # decode's signature


@cache  # the same case gives the same tensors in every grading; the tests never modify them
def build(case: DecodeCase) -> DecodeInputs:
    shape = (case.batch, case.heads, case.length, case.dim)
    q, k = (randn(*shape, seed=case.seed * 10 + j, dtype=case.dtype, scale=case.scale) for j in range(2))
    v = randn(*shape, seed=case.seed * 10 + 2, dtype=case.dtype, scale=case.value_scale)
    pads = torch.tensor(case.pads if case.pads is not None else (0,) * case.batch)
    slots = torch.arange(case.length)[None, :]
    real = slots >= pads[:, None]
    counted = case.stride * (slots - pads[:, None]) + case.start
    if case.spread:
        counted = torch.randint(
            case.start, case.start + 4 * case.length + 1, real.shape, generator=generator(case.seed)
        )
    positions = torch.where(real, counted, torch.zeros_like(slots))
    choices = {"cache": case.cache, "window": case.window, "pairing": case.pairing}
    kwargs = {key: value for key, value in choices.items() if case.spelled or value != CHOICE_DEFAULTS[key]}
    if case.base is not None:
        kwargs["base"] = case.base
    if case.pads is not None:
        kwargs["attention_mask"] = real[:, : case.prompt_len].to(getattr(torch, case.mask_dtype))
    if case.gives_positions:
        ids = torch.where(real, positions, torch.full_like(positions, case.pad_id))
        kwargs["position_ids"] = ids.to(getattr(torch, case.ids_dtype))
    return DecodeInputs(case, q, k, v, kwargs, real, positions)


def single_row(inputs: DecodeInputs, row: int) -> DecodeInputs:
    """Row ``row`` alone and without its padding: what a left-padded batch must give that row."""
    pads = (inputs.case.pads or (0,) * inputs.case.batch)[row]
    case = replace(
        inputs.case, batch=1, length=inputs.case.length - pads, prompt_len=inputs.case.prompt_len - pads, pads=None
    )
    alone = build(case)
    cut = (slice(row, row + 1), slice(None), slice(pads, None))
    kwargs = dict(alone.kwargs)
    if "position_ids" in kwargs:
        kwargs["position_ids"] = inputs.positions[row : row + 1, pads:]
    return replace(
        alone,
        q=inputs.q[cut],
        k=inputs.k[cut],
        v=inputs.v[cut],
        kwargs=kwargs,
        positions=inputs.positions[row : row + 1, pads:],
    )


def run(student, inputs: DecodeInputs, strict: bool = False, **changes) -> tuple[torch.Tensor, object]:
    """The student's (out, cached_keys) for these inputs (``outputs_of``); ``changes`` replace keyword arguments."""
    return outputs_of(call(student, inputs, **changes).output, inputs, strict)


def call(student, inputs: DecodeInputs, **changes) -> CallResult:
    """The call for these inputs. A case's own tensors (``build``) are called once per submission: every test
    that judges the case shares the call, and the inputs test reads what it left of the inputs."""
    args, kwargs = (inputs.q, inputs.k, inputs.v, inputs.case.prompt_len), inputs.kwargs | changes
    if inputs is not build(inputs.case):
        return student.call("decode", *args, **kwargs)
    # The key of a call without changes is (case, ()), as expect_inputs_untouched makes it.
    return student.noted(answer(student, (inputs.case, tuple(sorted(changes.items()))), "decode", *args, **kwargs))


def expect_inputs_untouched(student, case: DecodeCase) -> None:
    """The call for a case (``call``, shared) leaves every tensor argument as it was (``draw.expect_inputs_left``)."""
    inputs = build(case)
    tensors = {
        name: value
        for name, value in (("q", inputs.q), ("k", inputs.k), ("v", inputs.v), *inputs.kwargs.items())
        if isinstance(value, torch.Tensor)
    }
    expect_inputs_left(
        student, (case, ()), "decode", (inputs.q, inputs.k, inputs.v, case.prompt_len), inputs.kwargs, tensors
    )


def outputs_of(output: object, inputs: DecodeInputs, strict: bool = False) -> tuple[torch.Tensor, object]:
    """(out, cached_keys) of a call's output. out is checked here (a tensor of q's shape); cached_keys only by the
    tests that judge it (``cached``), so that a missing cache costs those tests alone. ``strict``: the type test."""
    if isinstance(output, torch.Tensor) and not strict:
        output = (output, OUT_ALONE)  # the values tests judge it as out; the cache tests say what is missing
    if not (isinstance(output, tuple) and len(output) == 2):
        raise Fail(f"decode must return a pair of tensors (out, cached_keys); it returned {_returned(output)}.")
    out = as_tensor(output[0], "decode's out", strict)
    expect_shape(out, inputs.q.shape, "decode's out")
    return out, (as_tensor(output[1], "decode's cached_keys", strict) if strict else output[1])


OUT_ALONE = object()  # decode returned one tensor: out without cached_keys


def _returned(output: object) -> str:
    if isinstance(output, NotATensor):
        return "None" if output.returned == "None" else f"a {output.returned} with no tensor in it"
    return f"a tuple of {len(output)}" if isinstance(output, tuple) else "one tensor"


def cached(value: object) -> torch.Tensor:
    if value is OUT_ALONE:
        raise Fail(
            "decode must return a pair (out, cached_keys); it returned one tensor, so there are no cached "
            "keys to check."
        )
    return as_tensor(value, "decode's cached_keys")


def tolerance(inputs: DecodeInputs) -> torch.Tensor:
    """[B, H, T, D]: the error model's allowance for out (``decode_tolerance``)."""
    return _case_tolerance(inputs.case) if inputs is build(inputs.case) else _tolerance(inputs)


@cache
def _case_tolerance(case: DecodeCase) -> torch.Tensor:
    return _tolerance(build(case))


def _tolerance(inputs: DecodeInputs) -> torch.Tensor:
    return decode_tolerance(
        inputs.q,
        inputs.k,
        inputs.v,
        inputs.positions,
        decode_visibility(inputs.real, inputs.case.window),
        inputs.base,
        inputs.case.pairing,
    )


def real_only(tensor: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """The tensor with the entries of padding tokens set to 0: those are not checked."""
    return torch.where(real[:, None, :, None], tensor.double(), torch.zeros((), dtype=torch.float64))


def matches(
    actual: torch.Tensor,
    expected: torch.Tensor,
    inputs: DecodeInputs,
    scale: float = 1.0,
    first_token: int = 0,
    allowed: torch.Tensor | None = None,
) -> bool:
    """Within tolerance (``allowed``, else ``tolerance(inputs)``) on the real tokens from ``first_token`` on
    (the decoded ones: the prompt_len)."""
    judged = inputs.real & (torch.arange(inputs.case.length) >= first_token)
    allowed = tolerance(inputs) if allowed is None else allowed
    return within(real_only(actual, judged), real_only(expected, judged), scale * allowed)


@cache
def truth(case: DecodeCase) -> torch.Tensor:
    """The oracle's out for a case, computed once per grading process."""
    return expected_out(build(case))


def expected_out(
    inputs: DecodeInputs,
    window: int | None | str = "case",
    visible: torch.Tensor | None = None,
    query_positions=None,
    key_positions=None,
    pairing: str | None = None,
) -> torch.Tensor:
    """The oracle's out for these inputs, or for a changed reading of them (a known mistake)."""
    window = inputs.case.window if window == "case" else window
    visible = decode_visibility(inputs.real, window) if visible is None else visible
    return oracle_decode(
        inputs.q,
        inputs.k,
        inputs.v,
        visible,
        inputs.positions if query_positions is None else query_positions,
        inputs.positions if key_positions is None else key_positions,
        pairing or inputs.case.pairing,
        inputs.base,
    )
