"""What a hidden test may ask of a submission: the one interface between the judge and the sandbox.

A hidden test receives a ``Student`` and calls its operations. Two implementations exist:

* ``grader.suite.local.LocalStudent`` runs trusted code (the reference, the bundled mutants) in the
  judging process. It exists to test the suite itself quickly; never use it on a submission.
* ``grader.sandbox.SandboxStudent`` (the real one) sends each call to a sandboxed child process as
  plain arrays and brings plain arrays back; nothing is pickled.

Both implement ``call`` with the same meaning, so a test cannot tell them apart.

Operations (``op``) come from the exercise table, ``poslab.exercises.EXERCISES`` (``OPS`` and
``NAME_OF_OP`` below), and do this in the child:

``"attention"``, ``"sinusoidal_encoding"``, ``"apply_rope"``, ``"alibi_slopes"``, ``"alibi_bias"``,
``"t5_relative_bucket"``, ``"t5_relative_bias"``, ``"decode"``
    (each function an exercise names) call the submission's function of that name with
    ``args``/``kwargs``.
``"learned.parameters"``  kwargs ``max_len``, ``d_model``: build the module and report every
    parameter (from ``.parameters()``) as ``TensorInfo`` (output is a tuple of them, maybe empty).
``"learned.buffers"``     the same for ``.buffers()``: lets a test say "a buffer of that shape was found".
``"learned.forward"``     kwargs ``max_len``, ``d_model``, ``x``, optional ``table`` (a tensor
    copied into the module's one parameter of shape ``[max_len, d_model]``, or, when there is no
    such parameter, its one buffer of that shape, with the note ``TABLE_IN_BUFFER``; with neither,
    the call raises ``CannotCheck``), optional ``dtype`` (a torch dtype name such as
    ``"float64"``; the module is moved with ``.to(dtype)`` after the copy) and optional ``device``
    (``"meta"``: the module is moved with ``.to("meta")``); returns ``forward(x)``. With ``upstream`` (a
    tensor of out's shape) it returns ``(forward(x), gradient)``: the gradient of ``sum(out * upstream)``
    in the module's one ``[max_len, d_model]`` parameter, or None when out has no graph back to it.

Arguments may be ``None``, bool, int, float, str, tuples/lists of those, and ``torch.Tensor``
(any real dtype, on ``cpu`` or ``meta``). A tensor wrapped in ``grader.argument_layout.Viewed(t, layout)``
reaches the student's code with t's values but as a view of a contiguous storage, in the layout real
models produce (transposed, permuted, sliced with strides, broadcast). The output is a tensor, a tuple of tensors, or (for meta inputs or
``learned.parameters``) ``TensorInfo``. Anything else the student returns (an ndarray, a list, None)
comes back as ``NotATensor``: the type it was, and its values as a tensor when they convert (a numpy
array or a list of numbers), so that a value test can still judge them after the type test failed it.

Who said what: ``StudentError`` is only ever an exception the submission's code raised.
``CannotCheck`` and ``CallResult.notes`` are the grader's own findings (made in the sandbox, sent as
findings, worded by the judge); a test reports them as findings, never as "your code raised".

A call whose arguments include a ``meta`` tensor returns ``TensorInfo`` in place of each tensor.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from poslab.exercises import EXERCISES, Exercise

CLASS_OPS = ("parameters", "buffers", "forward")  # what a test may do with a class an exercise names


def ops_of(exercise: Exercise) -> dict[str, str]:
    """op -> the submitted name it calls. A function's name is its op; a class (a capitalised
    name) gives ``<exercise id>.parameters``, ``<exercise id>.buffers`` and ``<exercise id>.forward``."""
    ops = {}
    for name in exercise.names:
        if name[:1].isupper():
            ops.update({f"{exercise.id}.{action}": name for action in CLASS_OPS})
        else:
            ops[name] = name
    return ops


NAME_OF_OP: dict[str, str] = {op: name for exercise in EXERCISES for op, name in ops_of(exercise).items()}
OPS: tuple[str, ...] = tuple(NAME_OF_OP)


class StudentError(Exception):
    """The submission's code raised. ``kind`` is the exception's type name, ``message`` its text.

    Both come from untrusted code: show them to the student, never decide anything on them beyond
    "it raised" and, for the spec'd errors, the type name and whether given numbers appear.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class NotImplementedBySubmission(Exception):
    """The name is missing from the submission, or its code raised ``NotImplementedError``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not implemented yet")
        self.name = name


class SubmissionCrashed(Exception):
    """The child died, ran out of its time or memory budget, or broke the protocol.

    ``reason`` is a sentence for the student (e.g. "ran past the 20 s time limit for this exercise").
    Every later call for the same exercise raises it again.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CannotCheck(Exception):
    """The grader could not make the call a test asked for, because of the submission's structure
    (e.g. no parameter or buffer of shape [max_len, d_model] to put the test's table in).

    ``reason`` is the judge's own sentence, a finding: not an exception of the submission's code.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# The grader's notes about a call that went through (worded by the judge; see CallResult.notes).
TABLE_IN_BUFFER = (
    "the module keeps its [max_len, d_model] table as a buffer, not a parameter; this test put "
    "its own table into that buffer to check the forward"
)


def no_table_reason(buffers_of_shape: int, parameters_of_shape: int) -> str:
    """The judge's sentence when learned.forward found no single table to copy the test's table into."""
    if parameters_of_shape > 1 or buffers_of_shape > 1:
        return (
            "the module has several parameters or buffers of shape [max_len, d_model], so the grader "
            "could not tell which one is the table (the spec asks for exactly one)"
        )
    return (
        "the module has no parameter (and no buffer) of shape [max_len, d_model], so the grader could not put "
        "its own table in to check the forward: register the table with nn.Parameter"
    )


@dataclass(frozen=True)
class NotATensor:
    """An output that is not a tensor: ``returned`` names its type (``numpy.ndarray``, ``list``,
    ``None``); ``values`` is it converted to a tensor (or its ``TensorInfo``), None when it does not
    convert. The type test fails it; value tests judge ``values`` and say they converted it."""

    returned: str
    values: Any = None

    def sentence(self, what: str) -> str:
        article = "" if self.returned == "None" else ("an " if self.returned[:1] in "aeiou" else "a ")
        return f"{what} returned {article}{self.returned}, not a torch.Tensor"


@dataclass(frozen=True)
class TensorInfo:
    shape: tuple[int, ...]
    dtype: str  # torch dtype name without the "torch." prefix, e.g. "float32"
    device: str  # "cpu" or "meta"
    requires_grad: bool = False


@dataclass(frozen=True)
class Unsendable:
    """A value a submission put into a dict argument that does not travel as plain JSON: its type's name.
    It equals no value a test gives."""

    type_name: str


@dataclass(frozen=True)
class CallResult:
    output: Any  # torch.Tensor | tuple[torch.Tensor, ...] | TensorInfo | tuple[TensorInfo, ...]
    inputs_after: tuple[torch.Tensor | None, ...] = field(
        default=()
    )  # each tensor argument as the child saw it after the call, in order (args then kwargs); None for meta tensors
    wall_seconds: float = 0.0  # measured by the judging side around the call, IPC included
    notes: tuple[str, ...] = field(default=())  # the grader's findings about this call, in the judge's words
    # each dict argument (args then kwargs) as the child saw it after the call: plain values, or Unsendable
    dicts_after: tuple[dict, ...] = field(default=())


def converted_note(what: str, output: NotATensor) -> str:
    return f"{output.sentence(what)}; this test converted it to a tensor to judge its values"


class Student(abc.ABC):
    """A submission as the hidden tests see it.

    It keeps the notes of the calls made since ``begin_case()`` (``CallResult.notes``), so that a
    failed test can say what the grader worked around (``grader.suite.run_case`` adds them).
    """

    def begin_case(self) -> None:
        self._case_notes: list[str] = []

    def case_notes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(getattr(self, "_case_notes", ())))

    def noted(self, result: CallResult) -> CallResult:
        """Implementations pass every CallResult through here before returning it."""
        if result.notes:
            if not hasattr(self, "_case_notes"):
                self._case_notes = []
            self._case_notes.extend(result.notes)
        return result

    @abc.abstractmethod
    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        """Run ``op`` in the submission; raise StudentError, NotImplementedBySubmission or SubmissionCrashed."""

    def call_timed(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        """``call`` for a speed test, which reads only ``wall_seconds``: an implementation may send the
        output back described (``TensorInfo``), not with its values."""
        return self.call(op, *args, **kwargs)

    def call_many(
        self, calls: Sequence[tuple[str, tuple, dict]], wait_seconds: float
    ) -> list[CallResult | Exception | None]:
        """Each ``(op, args, kwargs)``'s CallResult, or the exception its ``call`` raised; None for the calls not
        made, those after one that crashed the submission. The sandbox's sends a call before the previous
        answer is in, and gives up a call past ``wait_seconds`` at no cost to the exercise's time (None for it
        and the rest); calls here in the process wait for nothing."""
        outcomes: list[CallResult | Exception | None] = [None] * len(calls)
        for index, (op, args, kwargs) in enumerate(calls):
            try:
                outcomes[index] = self.call(op, *args, **kwargs)
            except SubmissionCrashed as crash:
                outcomes[index] = crash
                break
            except Exception as error:  # noqa: BLE001 -- the caller keeps it, as answer() does
                outcomes[index] = error
        return outcomes

    @abc.abstractmethod
    def call_overhead_seconds(self) -> float:
        """Wall time of a trivial round trip (for speed tests to subtract); 0 for LocalStudent."""

    # Conveniences: the output alone.
    def attention(self, q, k, v, bias=None):
        return self.call("attention", q, k, v, bias=bias).output

    def sinusoidal_encoding(self, seq_len: int, d_model: int, **kwargs):
        return self.call("sinusoidal_encoding", seq_len, d_model, **kwargs).output

    def apply_rope(self, x, **kwargs):
        return self.call("apply_rope", x, **kwargs).output

    def alibi_slopes(self, n_heads: int):
        return self.call("alibi_slopes", n_heads).output

    def alibi_bias(self, n_heads: int, seq_len: int):
        return self.call("alibi_bias", n_heads, seq_len).output

    def learned_parameters(self, max_len: int, d_model: int) -> tuple[TensorInfo, ...]:
        return self.call("learned.parameters", max_len=max_len, d_model=d_model).output

    def learned_buffers(self, max_len: int, d_model: int) -> tuple[TensorInfo, ...]:
        return self.call("learned.buffers", max_len=max_len, d_model=d_model).output

    def learned_forward(self, max_len: int, d_model: int, x, **kwargs):
        return self.call("learned.forward", max_len=max_len, d_model=d_model, x=x, **kwargs).output
