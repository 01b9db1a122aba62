"""The hidden suite with a recorder: what each call was asked and what it answered, as digests.

``RecordingSuite`` wraps ``grader.suite`` (same tests, same hash) and hands each test a
``Recorder`` in place of the student. The recorder passes every call through unchanged and keeps,
per (test, op, arguments), a digest of the output: every tensor's dtype, shape and values, and the
type of any exception. A recorded equivalent mutant must leave exactly the reference's digests on
the suite's inputs (``differences``). The wording of an error message is not compared: the spec
asks only that a message names some numbers, which a test checks.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import torch

from grader.argument_layout import Viewed
from grader.student import (
    CallResult,
    CannotCheck,
    NotATensor,
    NotImplementedBySubmission,
    Student,
    StudentError,
    SubmissionCrashed,
)

Log = dict[tuple[str, str, str], str]  # (test name, op, digest of the arguments) -> digest of the answer


def _update(digest, value: Any) -> None:
    if isinstance(value, Viewed):
        digest.update(f"L{value.layout}".encode())
        value = value.tensor
    if isinstance(value, torch.Tensor):
        digest.update(f"t{value.dtype}{tuple(value.shape)}{value.device.type}".encode())
        if value.device.type == "meta":  # no values
            return
        tensor = value.detach().cpu()
        if tensor.is_floating_point() or tensor.is_complex():
            # One NaN, and 0.0 for -0.0: equal values give equal digests.
            tensor = torch.where(tensor.isnan(), torch.full_like(tensor, float("nan")), tensor + 0)
        digest.update(tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, (tuple, list)):
        digest.update(f"({len(value)}".encode())
        for item in value:
            _update(digest, item)
        digest.update(b")")
    elif isinstance(value, dict):
        for key in sorted(value):
            digest.update(repr(key).encode())
            _update(digest, value[key])
    elif isinstance(value, NotATensor):
        digest.update(f"N{value.returned}".encode())
        _update(digest, value.values)
    else:  # TensorInfo, numbers, strings, None, dtypes
        digest.update(repr(value).encode())


def digest_of(*values: Any) -> str:
    digest = hashlib.sha256()
    for value in values:
        _update(digest, value)
    return digest.hexdigest()[:24]


def _outcome_of_error(error: BaseException) -> str:
    if isinstance(error, StudentError):
        return f"raised {error.kind}"
    if isinstance(error, SubmissionCrashed):
        return "crashed"
    if isinstance(error, NotImplementedBySubmission):
        return "not implemented"
    if isinstance(error, CannotCheck):
        return "cannot check"
    return f"grader error {type(error).__name__}"


class Recorder(Student):
    """The student as the test sees it, with every answer's digest written to ``log``."""

    def __init__(self, inner: Student, test: str, log: Log) -> None:
        self.inner, self.test, self.log = inner, test, log

    def call_overhead_seconds(self) -> float:
        return self.inner.call_overhead_seconds()

    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        key = (self.test, op, digest_of(args, kwargs))
        try:
            result = self.inner.call(op, *args, **kwargs)
        except Exception as error:
            self.log.setdefault(key, _outcome_of_error(error))
            raise
        self.log.setdefault(key, digest_of(result.output, result.inputs_after, result.dicts_after))
        return self.noted(result)


class RecordingSuite:
    """``grader.suite`` whose tests see a ``Recorder``; one log per judging thread (``take_log``)."""

    def __init__(self, suite: Any = None) -> None:
        if suite is None:
            import grader.suite as suite
        self.suite = suite
        self._logs = threading.local()

    def collect(self):
        return self.suite.collect()

    def suite_hash(self) -> str:
        return self.suite.suite_hash()

    def run_case(self, case, student: Student):
        if not hasattr(self._logs, "log"):
            self._logs.log = {}
        return self.suite.run_case(case, Recorder(student, case.name, self._logs.log))

    def take_log(self) -> Log:
        """This thread's log since the last call (the submission it just graded)."""
        log = getattr(self._logs, "log", {})
        self._logs.log = {}
        return log


def differences(reference: Log, other: Log, exercise_tests: set[str], accepted: tuple[Log, ...] = ()) -> list[str]:
    """The calls of ``exercise_tests`` whose answers differ from the reference's and from every
    ``accepted`` log's (or that only one side made)."""
    ours = {key: value for key, value in reference.items() if key[0] in exercise_tests}
    theirs = {key: value for key, value in other.items() if key[0] in exercise_tests}
    found = [
        f"{test}: {op} answered differently"
        for (test, op, args), value in ours.items()
        if (test, op, args) in theirs
        and theirs[(test, op, args)] != value
        and all(log.get((test, op, args)) != theirs[(test, op, args)] for log in accepted)
    ]
    found += [f"{test}: {op} was called only for the reference" for (test, op, args) in ours.keys() - theirs.keys()]
    found += [f"{test}: {op} was called only for the mutant" for (test, op, args) in theirs.keys() - ours.keys()]
    return sorted(set(found))


def changed_tests(reference: Log, other: Log, exercise_tests: set[str]) -> set[str]:
    """The tests of ``exercise_tests`` that saw another answer, or another call, from ``other``."""
    ours = {key: value for key, value in reference.items() if key[0] in exercise_tests}
    theirs = {key: value for key, value in other.items() if key[0] in exercise_tests}
    return {key[0] for key in ours.keys() ^ theirs.keys()} | {
        key[0] for key in ours.keys() & theirs.keys() if ours[key] != theirs[key]
    }
