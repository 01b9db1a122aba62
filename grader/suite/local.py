"""``LocalStudent``: the ``Student`` interface over code running in this very process.

For TRUSTED code only: the reference and the bundled mutants, to test the suite quickly. A real
submission goes through ``grader.sandbox``, never here. The semantics follow ``grader.student``
exactly: inputs are copied before the call (the caller's tensors are never touched),
``Viewed`` arguments arrive as views in their layout, the ops run as in the child
(``grader.sandboxed.exercise_calls``), meta calls answer with ``TensorInfo``, and errors become
``StudentError`` / ``NotImplementedBySubmission``.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Mapping
from typing import Any

import torch

from grader.argument_layout import Viewed
from grader.sandbox.replies import decode_dict_state
from grader.sandboxed.exercise_calls import (
    DESCRIBED_OPS,
    PLAIN_NUMBERS,
    Finding,
    converted,
    dict_state,
    run_op,
    type_name,
)
from grader.sandboxed.protocol import MAX_PARTS, NoteCode
from grader.sandboxed.tensor_codec import apply_view
from grader.student import (
    NAME_OF_OP,
    OPS,
    TABLE_IN_BUFFER,
    CallResult,
    CannotCheck,
    NotATensor,
    NotImplementedBySubmission,
    Student,
    StudentError,
    TensorInfo,
    converted_note,
    no_table_reason,
)


def namespace_from_source(source: str, name: str = "submission") -> dict[str, Any]:
    """Execute trusted ``source`` in a fresh module and return its namespace."""
    module = types.ModuleType(name)
    sys.modules[name] = module  # as an import does: dataclasses and typing look their module up there
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 -- trusted code only
    finally:
        del sys.modules[name]
    return module.__dict__


def _deliver(value: Any) -> Any:
    """What the submission receives for one argument: a private copy, non-contiguous if asked."""
    if isinstance(value, Viewed):  # t's values, in its layout: a view of a contiguous storage, as the child builds it
        return apply_view(value.layout.storage(value.tensor), value.layout.wire(value.tensor.shape))
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_deliver(item) for item in value)
    if isinstance(value, dict):
        return {key: _deliver(item) for key, item in value.items()}
    return value


def _is_meta(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def _info(tensor: torch.Tensor) -> TensorInfo:
    return TensorInfo(
        tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."), tensor.device.type, tensor.requires_grad
    )


def _report(value: Any, as_info: bool) -> Any:
    """The submission's output as the judge sees it: detached tensors, or their TensorInfo; a
    non-tensor part as ``NotATensor`` with its converted values, as the child sends it."""
    if isinstance(value, torch.Tensor):
        return _info(value) if as_info else value.detach().clone()
    if type(value) in (tuple, list) and 0 < len(value) <= MAX_PARTS and any(isinstance(v, torch.Tensor) for v in value):
        return tuple(v if type(v) in PLAIN_NUMBERS else _report(v, as_info) for v in value)
    values = converted(value)
    return NotATensor(type_name(value), None if values is None else _report(values, as_info))


class LocalStudent(Student):
    """A trusted submission, given as the namespace its source defined."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = dict(namespace)

    @classmethod
    def from_source(cls, source: str, name: str = "submission") -> LocalStudent:
        return cls(namespace_from_source(source, name))

    def call_overhead_seconds(self) -> float:
        return 0.0

    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; known: {', '.join(OPS)}")
        args = tuple(_deliver(a) for a in args)
        kwargs = {key: _deliver(value) for key, value in kwargs.items()}
        tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
        dicts = [v for v in (*args, *kwargs.values()) if type(v) is dict]
        on_meta = any(_is_meta(t) for t in tensors) or kwargs.get("device") == "meta"
        notes: list[str] = []
        start = time.perf_counter()
        output = self._run(op, args, kwargs, notes)
        wall = time.perf_counter() - start
        if op in DESCRIBED_OPS:
            reported = tuple(_info(p) for p in output)
        else:
            reported = _report(output, on_meta)
        inputs_after = tuple(None if _is_meta(t) else t.detach().clone() for t in tensors)
        sentences = [TABLE_IN_BUFFER for note in notes if note == NoteCode.TABLE_IN_BUFFER]
        parts = reported if isinstance(reported, tuple) else (reported,)
        sentences += [
            converted_note(NAME_OF_OP[op], part)
            for part in parts
            if isinstance(part, NotATensor) and part.values is not None
        ]
        dicts_after = tuple(decode_dict_state(dict_state(given)) for given in dicts)  # as the sandbox reports them
        return self.noted(CallResult(reported, inputs_after, wall, tuple(sentences), dicts_after))

    def _lookup(self, name: str) -> Any:
        if name not in self.namespace:
            raise NotImplementedBySubmission(name)
        return self.namespace[name]

    def _run(self, op: str, args: tuple, kwargs: dict, notes: list) -> Any:
        name = NAME_OF_OP[op]
        target = self._lookup(name)
        try:
            return run_op(op, target, args, kwargs, notes)
        except Finding as finding:
            raise CannotCheck(no_table_reason(finding.details["buffers"], finding.details["parameters"])) from None
        except NotImplementedError:
            raise NotImplementedBySubmission(name) from None
        except Exception as error:  # noqa: BLE001 -- the submission's error, reported as data
            raise StudentError(type(error).__name__, str(error)) from None
