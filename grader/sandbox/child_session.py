"""The judge's end of one child: its time budget, its first crash kept for good, its round trip.

``ChildSession`` allows ``timeout`` seconds of waiting per exercise, at most half of them for one call;
past it, or when the child dies or breaks the protocol, the child and all it started are killed and the
crash is kept: every later use raises it again (``grader.sandbox.session`` then gives the exercise's
later tests a fresh child with the time left). A call made ahead of the tests may be given up sooner, at
no cost to that time (``receive``'s ``give_up_after``).
"""

from __future__ import annotations

import socket
import time

from grader.sandbox.replies import explain_end
from grader.sandbox.worker_process import GraderFault, WorkerProcess
from grader.sandboxed import protocol
from grader.sandboxed.protocol import MessageKind
from grader.student import SubmissionCrashed


class ChildSession:
    """The judge's end of one child: a time budget, and the first crash kept for good.

    ``timeout`` seconds of waiting for the child are allowed in all; past it, or when the child
    dies or breaks the protocol, the child is killed and ``SubmissionCrashed`` is raised, now and
    on every later use.
    """

    def __init__(self, worker: WorkerProcess, timeout: float) -> None:
        self.worker = worker
        self.timeout = timeout
        self.budget = timeout
        self.crash: SubmissionCrashed | None = None
        self.fault: GraderFault | None = None  # the worker failed: not the submission's doing
        self.sock: socket.socket | None = worker.spawn()
        self.reader = protocol.FrameReader(self.sock, worker.limits)
        self.round_trip: float | None = None  # seconds: see round_trip_seconds
        self.gave_up = False  # ended for a call made ahead that ran too long (receive's give_up_after)

    def receive(self, what: str, one_call: bool = False, give_up_after: float | None = None) -> tuple[dict, bytearray]:
        """The child's next frame; ``one_call``: the answer to a call, which may wait half the exercise's time at most.

        ``give_up_after``: a call made ahead of the tests (``call_many``) that runs longer is given up: the child
        is ended as for a crash (``gave_up`` set) and that wait is not charged to the exercise's time."""
        if self.crash is not None:
            raise self.crash
        started = time.monotonic()
        wait = min(self.budget, self.timeout / 2) if one_call else self.budget
        giving_up = give_up_after is not None and give_up_after < wait
        try:
            return self.reader.read(started + (give_up_after if giving_up else wait))
        except protocol.ReadTimeout:
            if giving_up:
                self.gave_up = True
                self.budget += time.monotonic() - started  # refunded: the test that asks makes the call again
                self.fail(f"one call ran past {give_up_after:g} s when made ahead of the tests ({what})")
            if wait < self.budget:
                self.fail(
                    f"one call ran past {wait:g} s, half the {self.timeout:g} s time limit for this exercise ({what})"
                )
            self.fail(f"ran past the {self.timeout:g} s time limit for this exercise ({what})")
        except protocol.PeerClosed:
            ended = self.close()
            self.fail(f"the process running your code ended during {what} ({explain_end(ended)})")
        except protocol.ProtocolError as error:
            self.fail(f"your code broke the grader's protocol during {what}: {error}")
        finally:
            self.budget -= time.monotonic() - started

    def send(self, header: dict, blob: protocol.Buffer | list[memoryview] = b"", what: str = "a call") -> None:
        if self.crash is not None:
            raise self.crash
        try:
            protocol.send_frame(self.sock, header, blob)
        except OSError:
            ended = self.close()
            self.fail(f"the process running your code ended before {what} ({explain_end(ended)})")

    def round_trip_seconds(self) -> float:
        """The fastest of a few empty round trips to the child, measured at the first ask."""
        if self.round_trip is None:
            best = float("inf")
            for _ in range(5):
                started = time.monotonic()
                self.send({"type": MessageKind.PING}, what="a ping")
                reply, _ = self.receive("a ping")
                if reply["type"] != MessageKind.PONG:
                    self.fail("your code broke the grader's protocol during a ping")
                best = min(best, time.monotonic() - started)
            self.round_trip = best
        return self.round_trip

    def fail(self, reason: str) -> None:
        self.crash = SubmissionCrashed(reason)
        self.close()
        raise self.crash

    def release(self) -> None:
        """Done with the child: the worker ends it and forks the next ahead, nobody waiting. Safe to call twice."""
        if self.sock is None:
            return
        self.sock.close()
        self.sock = None
        try:
            self.worker.release()
        except GraderFault as fault:
            self.fault = fault

    def close(self) -> str:
        """Kill the child and all it started; return how it ended. Safe to call twice."""
        if self.sock is None:
            return ""
        self.sock.close()
        self.sock = None
        try:
            return self.worker.reap()
        except GraderFault as fault:  # kept for the caller: run_case would turn it into a failed test
            self.fault = fault
            return ""
