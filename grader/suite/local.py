"""``LocalStudent``: the ``Student`` interface over code running in this very process.

For TRUSTED code only: the reference and the bundled mutants, to test the suite quickly. A real
submission goes through ``grader.sandbox``, never here. The semantics follow ``grader.student``
exactly: inputs are copied before the call (the caller's tensors are never touched),
``Transposed`` arguments arrive as non-contiguous views, the ops run as in the child
(``grader.sandboxed.exercise_calls``), meta calls answer with ``TensorInfo``, and errors become
``StudentError`` / ``NotImplementedBySubmission``.
"""

from __future__ import annotations

import time
import types
from typing import Any, Mapping

import torch

from grader.sandboxed.exercise_calls import run_op
from grader.student import (
    NAME_OF_OP,
    OPS,
    CallResult,
    NotImplementedBySubmission,
    Student,
    StudentError,
    TensorInfo,
    Transposed,
)


def namespace_from_source(source: str, name: str = "submission") -> dict[str, Any]:
    """Execute trusted ``source`` in a fresh module and return its namespace."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 -- trusted code only
    return module.__dict__


def _deliver(value: Any) -> Any:
    """What the submission receives for one argument: a private copy, non-contiguous if asked."""
    if isinstance(value, Transposed):
        source = value.tensor.transpose(value.dim0, value.dim1).contiguous()
        return source.transpose(value.dim0, value.dim1)  # t's values, not contiguous
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_deliver(item) for item in value)
    return value


def _is_meta(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def _info(tensor: torch.Tensor) -> TensorInfo:
    return TensorInfo(tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."),
                      tensor.device.type, tensor.requires_grad)


def _report(value: Any, as_info: bool) -> Any:
    """The submission's output as the judge sees it: detached tensors, or their TensorInfo."""
    if isinstance(value, torch.Tensor):
        return _info(value) if as_info else value.detach().clone()
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return tuple(_report(v, as_info) for v in value)
    raise StudentError("TypeError", f"returned {type(value).__name__} where a tensor was expected")


class LocalStudent(Student):
    """A trusted submission, given as the namespace its source defined."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = dict(namespace)

    @classmethod
    def from_source(cls, source: str, name: str = "submission") -> "LocalStudent":
        return cls(namespace_from_source(source, name))

    def call_overhead_seconds(self) -> float:
        return 0.0

    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}; known: {', '.join(OPS)}")
        args = tuple(_deliver(a) for a in args)
        kwargs = {key: _deliver(value) for key, value in kwargs.items()}
        tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
        on_meta = any(_is_meta(t) for t in tensors) or kwargs.get("device") == "meta"
        start = time.perf_counter()
        output = self._run(op, args, kwargs)
        wall = time.perf_counter() - start
        reported = tuple(_info(p) for p in output) if op == "learned.parameters" else _report(output, on_meta)
        inputs_after = tuple(None if _is_meta(t) else t.detach().clone() for t in tensors)
        return CallResult(reported, inputs_after, wall)

    def _lookup(self, name: str) -> Any:
        if name not in self.namespace:
            raise NotImplementedBySubmission(name)
        return self.namespace[name]

    def _run(self, op: str, args: tuple, kwargs: dict) -> Any:
        name = NAME_OF_OP[op]
        target = self._lookup(name)
        try:
            return run_op(op, target, args, kwargs)
        except NotImplementedError:
            raise NotImplementedBySubmission(name) from None
        except Exception as error:  # noqa: BLE001 -- the submission's error, reported as data
            raise StudentError(type(error).__name__, str(error)) from None
