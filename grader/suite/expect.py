"""What a hidden test asserts about a student's output: a ``Fail`` with the sentence the student reads.

Shapes, dtypes, finiteness, closeness to an oracle within a tolerance, which known mistake a wrong
output reproduces, and inputs left untouched. Messages never name the hidden sizes or values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import torch

from grader.student import NotATensor, StudentError, TensorInfo

T = TypeVar("T")


class Fail(AssertionError):
    """A property does not hold; the message is the sentence the student reads."""


def expect(condition: bool, message: str | Callable[[], str]) -> None:
    """Fail with ``message`` unless ``condition``; a callable message (a diagnosis that costs
    oracle calls) is only built when the condition fails."""
    if not condition:
        raise Fail(message() if callable(message) else message)


def as_tensor(value: object, what: str, strict: bool = False) -> torch.Tensor:
    """The student's output as a tensor, or a Fail naming what was expected.

    ``strict`` is for the type test of each output. Other tests judge the values of an ndarray or
    a list of numbers converted to a tensor (the note saying so is added by ``run_case``), so that
    returning the wrong type costs the type test only.
    """
    if isinstance(value, NotATensor):
        if strict or not isinstance(value.values, torch.Tensor):
            raise Fail(
                f"{value.sentence(what)}: the spec asks for a torch.Tensor"
                + (" (is a return statement missing?)." if value.returned == "None" else ".")
            )
        return value.values
    expect(isinstance(value, torch.Tensor), f"{what} must return a torch.Tensor, got {type(value).__name__}.")
    return value


def as_info(value: object, what: str) -> TensorInfo:
    if isinstance(value, NotATensor):
        raise Fail(f"{value.sentence(what)}: the spec asks for a torch.Tensor.")
    expect(isinstance(value, TensorInfo), f"{what} must return a tensor, got {type(value).__name__}.")
    return value


def as_pair(value: object, what: str) -> tuple:
    """``attention`` returns ``(out, weights)``; anything else fails with that sentence."""
    if isinstance(value, NotATensor):
        raise Fail(
            f"{what} must return a pair (out, weights); it returned "
            f"{'None' if value.returned == 'None' else 'a ' + value.returned}."
        )
    expect(
        isinstance(value, tuple) and len(value) == 2,
        f"{what} must return a pair (out, weights); got {type(value).__name__}"
        + (f" of length {len(value)}" if isinstance(value, tuple) else "")
        + ".",
    )
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
    if actual.is_complex() and not expected.is_complex():  # a real answer: the imaginary part must vanish too
        return within(actual.imag, torch.zeros_like(actual.imag), tolerance) and within(
            actual.real, expected, tolerance
        )
    diff = (actual.double() - expected.double()).abs()
    return bool((diff <= tolerance).all())


def diagnose(actual: torch.Tensor, wrong_variants: dict[str, Callable[[], torch.Tensor]], tolerance) -> str:
    """A sentence naming the known misconception ``actual`` reproduces, or '' if none. Where the
    test's inputs give several the same values, it names them all: it cannot tell which one it is.

    Variants are built lazily: most submissions are right and never need them.
    """
    matched = [misconception for misconception, build in wrong_variants.items() if within(actual, build(), tolerance)]
    if len(matched) == 1:
        return f" Your values match a known mistake: {matched[0]}."
    if matched:
        return f" Your values match several known mistakes this test cannot tell apart: {'; '.join(matched)}."
    return ""


def expect_untouched(after: tuple, before: Iterable[torch.Tensor], what: str, names: Iterable[str] = ()) -> None:
    """The tensors the submission received are unchanged after the call (no in-place edits); ``names``, the
    arguments' names in order, say which one changed."""
    names = tuple(names)
    for index, (seen, original) in enumerate(zip(after, before)):
        if seen is None:  # meta tensors have no values to compare
            continue
        if tuple(seen.shape) == tuple(original.shape) and bool(torch.equal(seen, original)):
            continue
        which = f"its {dtype_name(original)} {names[index]}" if index < len(names) else "its input"
        raise Fail(
            f"{what} modified {which} in place (e.g. +=, /=, masked_fill_, copy_, or a write into what "
            ".to() or .float() returned without copying). Callers keep using their tensors: compute a new "
            "one instead."
        )


# The meta device has shapes and no values: called with meta inputs, code that builds a tensor on the CPU
# meets them and torch says the two are on different devices, as on a GPU. Code that reads values
# (.item(), int(t), .tolist(), a boolean mask) or uses an op with no meta kernel cannot run there at all,
# which says nothing about devices; a CPU-only machine has no other device to try, so such code is not
# judged there (grader/README.md, fairness policy).
DEVICE_MISMATCH = ("expected device", "same device", "two devices")


def mixes_devices(error: StudentError) -> bool:
    """The submission's error says that tensors on two devices met."""
    return any(phrase in error.message for phrase in DEVICE_MISMATCH)


def on_meta_device(call: Callable[[], T], on_cpu: Callable[[], object]) -> T | None:
    """``call()``, a call with meta inputs; None when the submission's code could not run on the meta device
    for a reason other than mixing devices, and ``on_cpu()``, the same call with values, works (it then cannot
    be judged there). Code that raises with values too is judged by that error: it earns nothing here."""
    try:
        return call()
    except StudentError as error:
        if mixes_devices(error):
            raise
        on_cpu()
        return None
