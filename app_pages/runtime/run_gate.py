"""Page runs served in the order they arrive, one at a time by default (``POSLAB_PAGE_RUNS``).

Every session's script run shares one interpreter. Left alone, thirty runs that start together
advance together, each a thirtieth of the time, and all finish late: a class that opens its first
page in the same second waited 2 s for it (p95, 2 cores), though each run needs about 40 ms of the
interpreter. Served first come, first served, the k-th run finishes after about k runs' time, and
a run that arrives later (a student's next page) queues behind those already waiting instead of
slowing them down. A plain semaphore does not keep that order (a new run can take a slot a waiting
one was about to get): each waiting run holds a ticket, and a freed slot goes to the oldest.

A run that waits for something outside the interpreter (a submission's first look at its grade,
the lab's live run in its child process) lets its slot go meanwhile (``let_go``), and queues again
after. Runs outside a page (fragments rerun on a timer, the server's start-up) never take a slot.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from app_pages.runtime.process import one_per_process

SLOTS_ENV = "POSLAB_PAGE_RUNS"
DEFAULT_SLOTS = 1


class RunGate:
    def __init__(self, slots: int) -> None:
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: deque[threading.Event] = deque()
        self._held = threading.local()

    def _acquire(self) -> None:
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                ticket = None
            else:
                ticket = threading.Event()
                self._waiting.append(ticket)
        if ticket is not None:
            ticket.wait()  # the releasing run hands its slot over: nobody can take it in between
        self._held.value = True

    def _release(self) -> None:
        self._held.value = False
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1

    @contextmanager
    def slot(self) -> Iterator[None]:
        """One page run's turn (a rerun request or an error ends the run and frees the slot)."""
        self._acquire()
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def let_go(self) -> Iterator[None]:
        """Free this run's slot while it waits for something outside the interpreter; queue again after."""
        if not getattr(self._held, "value", False):
            yield
            return
        self._release()
        try:
            yield
        finally:
            self._acquire()


@one_per_process
def _gate(slots: int) -> RunGate:
    return RunGate(slots)


def page_runs() -> RunGate:
    """The process's gate, with ``POSLAB_PAGE_RUNS`` slots (at least 1)."""
    try:
        slots = int(os.environ.get(SLOTS_ENV, DEFAULT_SLOTS))
    except ValueError:
        slots = DEFAULT_SLOTS
    return _gate(max(1, slots))
