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
after. A call that usually answers at once but may wait (the store: a lock, a restarted server, a
slow disk) lets it go only once it has waited ``seconds`` (``let_go_after``: a watchdog thread frees
the slot on the run's behalf). Runs outside a page (fragments rerun on a timer, the server's
start-up) never take a slot.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app_pages.runtime.process import one_per_process

SLOTS_ENV = "POSLAB_PAGE_RUNS"
DEFAULT_SLOTS = 1


class Watchdog:
    """One thread that calls what is due: ``schedule(seconds, call)``, ``cancel(handle)`` (cheap: most
    calls are cancelled before they are due)."""

    def __init__(self) -> None:
        self._due = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._calls: dict[int, Callable[[], None]] = {}
        self._handles = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, seconds: float, call: Callable[[], None]) -> int:
        deadline = time.monotonic() + seconds
        with self._due:
            handle = next(self._handles)
            self._calls[handle] = call
            sooner = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, handle))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="run-gate-watchdog", daemon=True)
                self._thread.start()
            elif sooner:
                self._due.notify()
        return handle

    def cancel(self, handle: int) -> None:
        with self._due:
            self._calls.pop(handle, None)

    def _run(self) -> None:
        while True:
            with self._due:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._due.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                _, handle = heapq.heappop(self._heap)
                call = self._calls.pop(handle, None)
            if call is not None:
                call()


class RunGate:
    def __init__(self, slots: int) -> None:
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: deque[threading.Event] = deque()
        self._holders: set[int] = set()  # the threads whose run holds a slot now
        self.watchdog = Watchdog()  # shared with what a waiting run may want to say (store_calls)

    def _acquire(self, holder: int) -> None:
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                self._holders.add(holder)
                return
            ticket = threading.Event()
            self._waiting.append(ticket)
        ticket.wait()  # the releasing run hands its slot over: nobody can take it in between
        with self._lock:
            self._holders.add(holder)

    def _release(self, holder: int) -> bool:
        """Free ``holder``'s slot (hand it to the oldest waiting run); False if it held none."""
        with self._lock:
            if holder not in self._holders:
                return False
            self._holders.discard(holder)
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1
            return True

    @contextmanager
    def slot(self) -> Iterator[None]:
        """One page run's turn (a rerun request or an error ends the run and frees the slot)."""
        holder = threading.get_ident()
        self._acquire(holder)
        try:
            yield
        finally:
            self._release(holder)

    @contextmanager
    def let_go(self) -> Iterator[None]:
        """Free this run's slot while it waits for something outside the interpreter; queue again after."""
        holder = threading.get_ident()
        if not self._release(holder):
            yield
            return
        try:
            yield
        finally:
            self._acquire(holder)

    @contextmanager
    def let_go_after(self, seconds: float) -> Iterator[None]:
        """Keep the slot through a call that usually answers at once; free it if the call is still
        waiting after ``seconds``, and queue again once it answers."""
        holder = threading.get_ident()
        state = {"done": False, "released": False}
        guard = threading.Lock()

        def free_the_slot() -> None:
            with guard:
                if not state["done"]:
                    state["released"] = self._release(holder)

        handle = self.watchdog.schedule(seconds, free_the_slot)
        try:
            yield
        finally:
            self.watchdog.cancel(handle)
            with guard:
                state["done"] = True
            if state["released"]:
                self._acquire(holder)


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
