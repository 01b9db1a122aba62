"""Leases: the replica that dispatched a job holds it, and takes over the jobs of a stopped one.

A recorded job is held by its replica (``holder``) until ``lease_seconds`` from its last renewal;
the replica renews its jobs' leases every ``lease_seconds / 3`` while it waits. When a service
starts, and at each renewal after, it claims the queued jobs whose lease ran out (their replica
stopped) and grades them again. A service that stops cleanly releases its leases at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

logger = logging.getLogger(__name__)


class LeaseKeeper:
    """``regrade(record)`` is called for each claimed job; ``held()`` gives the ids this replica holds."""

    def __init__(
        self,
        store: Any,
        holder: str,
        lease_seconds: float,
        held: Callable[[], Iterable[str]],
        regrade: Callable[[Any], None],
        closing: threading.Event,
    ) -> None:
        self.store, self.holder, self.lease_seconds = store, holder, lease_seconds
        self.held, self.regrade, self.closing = held, regrade, closing

    def start(self) -> None:
        self.claim_abandoned()
        threading.Thread(target=self._keep, name="grader-leases", daemon=True).start()

    def claim_abandoned(self) -> None:
        try:
            claimed = self.store.claim_abandoned_jobs(self.holder, self.lease_seconds)
        except Exception:  # noqa: BLE001 - try again at the next renewal
            logger.exception("could not claim abandoned grading jobs")
            return
        for record in claimed:
            logger.info("grading job %s of %s again (its service stopped before the result)", record.id, record.student)
            self.regrade(record)

    def _keep(self) -> None:
        while not self.closing.wait(self.lease_seconds / 3):
            try:
                self.store.renew_leases(self.holder, list(self.held()), self.lease_seconds)
            except Exception:  # noqa: BLE001 - a database blip; the next round renews
                logger.exception("could not renew grading leases")
            self.claim_abandoned()

    def release(self) -> None:
        try:
            self.store.release_leases(self.holder)
        except Exception:  # noqa: BLE001 - then their leases run out by themselves
            logger.exception("could not release grading leases")
