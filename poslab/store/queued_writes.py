"""Writes nobody waits for (a lesson's visit): queued, and written by one thread when the store is free.

A page that records a visit must not wait for a busy store, so the visit goes into a bounded queue
and returns at once. One background thread writes what is queued, all of it in one transaction;
while the store is busy or down it keeps the visits and tries again later (backing off up to a few
seconds). The same student's visit of the same lesson, queued twice before it is written, is written
once (the first time is kept). A queue full (the store down for long) drops new visits and logs it.
What is still queued when the process is killed is lost: at most the last seconds of visits
(README, "What a fault may cost").
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Iterable
from datetime import datetime

log = logging.getLogger(__name__)

Visit = tuple[str, str]  # (student, lesson)
MAX_QUEUED = 10_000
FIRST_RETRY_SECONDS = 0.25
MAX_RETRY_SECONDS = 4.0
EXIT_FLUSH_SECONDS = 3.0


class QueuedVisits:
    """``write(visits)`` writes ``{(student, lesson): first seen}`` in one transaction, or raises."""

    def __init__(self, write: Callable[[dict[Visit, datetime]], None], max_queued: int = MAX_QUEUED) -> None:
        self._write = write
        self._max_queued = max_queued
        self._pending: dict[Visit, datetime] = {}
        self._changed = threading.Condition()
        self._writing = False
        self._dropped = 0
        self._thread: threading.Thread | None = None

    def add(self, visit: Visit, at: datetime) -> bool:
        """Queue one visit; False if the queue is full and it was dropped."""
        with self._changed:
            if visit not in self._pending:
                if len(self._pending) >= self._max_queued:
                    self._dropped += 1
                    if self._dropped == 1 or self._dropped % 1000 == 0:
                        log.warning("the progress store is not keeping up: %d visits not recorded", self._dropped)
                    return False
                self._pending[visit] = at
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="store-queued-visits", daemon=True)
                self._thread.start()
                atexit.register(self.flush, EXIT_FLUSH_SECONDS)  # a stop (not a kill) writes what is queued
            self._changed.notify_all()
        return True

    def pending(self, student: str) -> Iterable[str]:
        """Lessons this student visited that are not written yet (a page reads its own visits)."""
        with self._changed:
            return [lesson for (who, lesson) in self._pending if who == student]

    def queued(self) -> int:
        with self._changed:
            return len(self._pending)

    def flush(self, timeout: float) -> bool:
        """Wait until everything queued so far is written; False if ``timeout`` s passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._pending and not self._writing, timeout)

    def _run(self) -> None:
        delay = FIRST_RETRY_SECONDS
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._pending))
                batch = dict(self._pending)
                self._writing = True
            try:
                self._write(batch)
            except Exception as error:  # noqa: BLE001 - busy, down or full: kept, and tried again
                log.warning("visits kept in memory (%d), the store refused them: %s", len(batch), error)
                with self._changed:
                    self._writing = False
                    self._changed.notify_all()
                threading.Event().wait(delay)
                delay = min(2 * delay, MAX_RETRY_SECONDS)
                continue
            delay = FIRST_RETRY_SECONDS
            with self._changed:
                for visit in batch:
                    self._pending.pop(visit, None)
                self._writing = False
                self._changed.notify_all()
