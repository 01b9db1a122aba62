"""One submission's session with its child: the import, and every call.

``SubmissionSandbox`` holds one child for a submission and hands out a ``SandboxStudent`` per
exercise, the ``grader.student.Student`` the hidden tests call, one call at a time or several in flight
(``call_many``). The child's time budget and crashes are ``grader.sandbox.child_session``'s: after a
crash ``SubmissionSandbox.resumed`` gives the exercise's later tests a fresh child with the time left,
so one hang or crash costs the test it happened in, and the exercise's time stays bounded by
``timeout``. What the child sends back is checked in ``grader.sandbox.replies`` before any of it is used.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from grader.argument_layout import Viewed
from grader.sandbox.child_session import ChildSession
from grader.sandbox.replies import JudgeEncoder, check_import_error, decode_reply
from grader.sandbox.worker_process import GraderFault, WorkerProcess
from grader.sandboxed import protocol
from grader.sandboxed.protocol import MessageKind
from grader.student import NAME_OF_OP, OPS, CallResult, NotImplementedBySubmission, Student, SubmissionCrashed

RESUME_SECONDS = 1.0  # less time left than this: a fresh child could not even import, the crash stands


@dataclass
class LoadReport:
    """What importing the submission for one exercise came to."""

    import_errors: dict[str, dict]  # file -> the child's description of the error (checked)
    stuck_in: str | None  # the file being imported when the child died or ran out of time
    missing: list[str]


class SubmissionSandbox:
    """One submission in the sandbox: a child that serves its exercises one after another.

    ``for_exercise()`` gives the exercise's ``SandboxStudent`` after importing what it needs; the
    time limit restarts for each exercise. A child that crashed or ran out of time is killed
    with everything it started, and the next exercise gets a fresh one (files that hung or
    crashed the import are then left out by the caller's ``order``).
    """

    def __init__(self, worker: WorkerProcess, files: Mapping[str, str], timeout: float) -> None:
        self.worker = worker
        self.files = files  # read-only (a Submission's); sent as they are
        self.timeout = timeout
        self.session: ChildSession | None = None
        self.fault: GraderFault | None = None
        self.gave_up = False  # a call made ahead ran too long (ChildSession.gave_up): make no more ahead

    def resumed(self, student: SandboxStudent) -> SandboxStudent:
        """``student``; or, when one of its calls crashed the child and the exercise has time left, the same
        exercise in a fresh child with that time, its shared answers kept (a crashed call replays its crash)."""
        session = student.session
        self.gave_up = self.gave_up or session.gave_up
        if session.crash is None or student.load.stuck_in is not None or session.budget < RESUME_SECONDS:
            return student
        self.fault = self.fault or session.fault
        self.session = ChildSession(self.worker, self.timeout)
        self.session.budget = session.budget
        fresh = SandboxStudent(self.session, student.order, student.names, send_files=self.files)
        for kept in ("_drawn_answers", "_prefetched"):  # plan.ANSWERS_ATTRIBUTE, plan.PREFETCHED_ATTRIBUTE
            fresh.__dict__[kept] = student.__dict__.get(kept, {})
        return fresh

    def for_exercise(self, order: list[str], names: list[str]) -> SandboxStudent:
        fresh = self.session is None or self.session.crash is not None
        if fresh:
            self.close()
            self.session = ChildSession(self.worker, self.timeout)
        self.session.budget = self.timeout
        return SandboxStudent(self.session, order, names, send_files=self.files if fresh else None)

    def close(self) -> None:
        if self.session is not None:
            self.session.release()
            self.fault = self.fault or self.session.fault
            self.session = None


# In flight at once in call_many. On SCHED_BATCH (``grader.service.judge.batch_scheduling``) the child answers
# all those in its socket before the judge runs again: 2, 8 and 16 in flight took 282, 267 and 262-270 ms of
# CPU a grading (294 with 2 and no batch scheduling).
PIPELINED_CALLS = 16
# The calls in flight (their frames, headers counted) take at most this much: far below a socket's buffer,
# so sending one never blocks on a child busy writing a large answer. A larger call is sent alone.
PIPELINED_BYTES = 1 << 16
# A call's JSON header, over-counted: the suite's take a few hundred bytes; a socket buffers 208 KiB.
HEADER_ALLOWANCE = 1 << 12


@dataclass(frozen=True)
class _EncodedCall:
    name: str  # the submitted name the op calls
    header: dict
    buffers: list
    inputs: list  # the top-level tensor arguments, whose state the child reports after the call
    n_dicts: int
    nbytes: int  # the frame, its header over-counted (HEADER_ALLOWANCE)


@dataclass(frozen=True)
class _SentCall:
    call: _EncodedCall
    started: float


class _GivenUp(Exception):
    """call_many stops: the child crashed, or a call ran past the wait it was given."""


class SandboxStudent(Student):
    """A submission as the hidden tests see it, for one exercise; every call runs in the child.

    Construction imports what the exercise needs (``load`` says how that went). The first crash
    is kept: this and every later call for the exercise raise it again.
    """

    def __init__(
        self, session: ChildSession, order: list[str], names: list[str], send_files: Mapping[str, str] | None
    ) -> None:
        self.session = session
        self.order = list(order)
        self.names = list(names)
        self.found: set[str] = set()
        self.load = self._load(order, send_files)

    @property
    def crash(self) -> SubmissionCrashed | None:
        return self.session.crash

    def _load(self, order: list[str], send_files: Mapping[str, str] | None) -> LoadReport:
        report = LoadReport({}, None, list(self.names))
        try:
            ops = {op: name for op, name in NAME_OF_OP.items() if name in self.names}
            header = {"type": MessageKind.LOAD, "order": order, "names": self.names, "ops": ops}
            if send_files is not None:
                ready, _ = self.session.receive("start-up")
                if ready["type"] != MessageKind.READY:
                    self.session.fail("the sandbox did not start properly")
                header["files"] = send_files
            self.session.send(header, what="the import")
            while True:
                header, _ = self.session.receive(
                    f"the import of {report.stuck_in}" if report.stuck_in else "the import"
                )
                kind = header["type"]
                if kind == MessageKind.IMPORTING and header.get("file") in order:
                    report.stuck_in = header["file"]
                elif kind == MessageKind.IMPORTED and header.get("file") == report.stuck_in:
                    if header.get("error") is not None:
                        report.import_errors[report.stuck_in] = check_import_error(header["error"])
                    report.stuck_in = None
                elif kind == MessageKind.LOADED and isinstance(header.get("found"), list):
                    self.found = {name for name in self.names if name in header["found"]}
                    report.missing = [name for name in self.names if name not in self.found]
                    return report
                else:
                    self.session.fail("your code broke the grader's protocol during the import")
        except SubmissionCrashed:
            return report

    # -- the Student interface

    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        return self._call(op, args, kwargs, described=False)

    def call_timed(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        """The output comes back described: a speed test's 5 MB output cost more to copy out than to make."""
        return self._call(op, args, kwargs, described=True)

    def _call(self, op: str, args: tuple, kwargs: dict, described: bool) -> CallResult:
        return self._answer(self._send_call(self._encode_call(op, args, kwargs, described)))

    def call_many(
        self, calls: Sequence[tuple[str, tuple, dict]], wait_seconds: float
    ) -> list[CallResult | Exception | None]:
        """Pipelined: while the child works on a call, the next (when small) already waits in its socket, so
        the child never sleeps between them and the judge checks each answer while the child computes."""
        outcomes: list[CallResult | Exception | None] = [None] * len(calls)
        waiting: deque[tuple[int, _SentCall]] = deque()
        try:
            for index, (op, args, kwargs) in enumerate(calls):
                try:
                    encoded = self._encode_call(op, args, kwargs, described=False)
                except NotImplementedBySubmission as missing:
                    outcomes[index] = missing
                    continue
                except SubmissionCrashed:  # before this call (the import): the tests replay it themselves
                    break
                while waiting and (
                    len(waiting) >= PIPELINED_CALLS
                    or sum(sent.call.nbytes for _, sent in waiting) + encoded.nbytes > PIPELINED_BYTES
                ):
                    self._collect(waiting, outcomes, wait_seconds)
                try:
                    waiting.append((index, self._send_call(encoded)))
                except SubmissionCrashed:  # the child ended: which call did it is not known, none is charged
                    break
            while waiting:
                self._collect(waiting, outcomes, wait_seconds)
        except _GivenUp:
            pass
        return outcomes

    def _collect(self, waiting: deque, outcomes: list, wait_seconds: float) -> None:
        index, sent = waiting.popleft()
        try:
            outcomes[index] = self._answer(sent, wait_seconds)
        except SubmissionCrashed as crash:
            if not self.session.gave_up:
                outcomes[index] = crash
            raise _GivenUp from None
        except Exception as error:  # noqa: BLE001 -- the caller keeps it, as answer() does
            outcomes[index] = error

    def _encode_call(self, op: str, args: tuple, kwargs: dict, described: bool) -> _EncodedCall:
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}")  # a bug in a hidden test, not the student's
        if self.session.crash is not None:
            raise self.session.crash
        name = NAME_OF_OP[op]
        if name not in self.found:
            raise NotImplementedBySubmission(name)
        encoder = JudgeEncoder()
        header = {
            "type": MessageKind.CALL,
            "op": op,
            "args": [encoder.value(item) for item in args],
            "kwargs": {key: encoder.value(item) for key, item in kwargs.items()},
        }
        header["tensors"] = encoder.tensors
        if described:
            header["described"] = True
        # The child reports the top-level tensor arguments after the call, as LocalStudent does.
        inputs = [
            value.tensor if isinstance(value, Viewed) else value
            for value in (*args, *kwargs.values())
            if isinstance(value, (torch.Tensor, Viewed))
        ]
        n_dicts = sum(type(value) is dict for value in (*args, *kwargs.values()))
        buffers = encoder.buffers()
        nbytes = HEADER_ALLOWANCE + sum(piece.nbytes for piece in buffers)
        return _EncodedCall(name, header, buffers, inputs, n_dicts, nbytes)

    def _send_call(self, encoded: _EncodedCall) -> _SentCall:
        started = time.monotonic()
        self.session.send(encoded.header, encoded.buffers, f"a call to {encoded.name}")
        return _SentCall(encoded, started)

    def _answer(self, sent: _SentCall, wait_seconds: float | None = None) -> CallResult:
        name = sent.call.name
        reply, blob = self.session.receive(f"a call to {name}", one_call=True, give_up_after=wait_seconds)
        wall = time.monotonic() - sent.started
        try:
            return self.noted(decode_reply(reply, blob, name, sent.call.inputs, wall, sent.call.n_dicts))
        except protocol.ProtocolError as error:
            self.session.fail(f"your code broke the grader's protocol in a call to {name}: {error}")

    def call_overhead_seconds(self) -> float:
        """The fastest of a few empty round trips to the child, measured once per child (every speed test asks)."""
        return self.session.round_trip_seconds()
