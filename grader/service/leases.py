"""Leases: the replica that dispatched a job holds it, and takes over the jobs of a stopped one.

A recorded job is held by its replica (``holder``) until ``lease_seconds`` from its last renewal;
the replica renews its jobs' leases every ``lease_seconds / 3`` while it waits. When a service
starts, and at each renewal after, it claims the queued jobs whose lease ran out (their replica
stopped) and grades them again. A service that stops cleanly releases its leases at once; one that
was killed cannot, and its jobs are claimed at once by the next service started on the same machine
(its holder names the machine and the process, which is gone) instead of after the lease.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
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
            stopped = stopped_holders(self.store.queued_job_holders(), self.holder)
            claimed = self.store.claim_abandoned_jobs(self.holder, self.lease_seconds, stopped_holders=stopped)
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


def holder_name(unique: str) -> str:
    """This process's lease holder: machine, process id, and a part unique to this service."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{unique}"


def stopped_holders(holders: Iterable[str], me: str) -> list[str]:
    """The holders of this machine whose process is gone (killed before it could release its leases)."""
    host = me.rsplit(":", 2)[0]
    stopped = []
    for holder in holders:
        parts = holder.rsplit(":", 2)
        if holder == me or len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        if not _process_alive(int(parts[1])):
            stopped.append(holder)
    return stopped


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed child its parent has not waited for yet is a zombie: gone all the same
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
