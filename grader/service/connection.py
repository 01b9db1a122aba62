"""The service's way to its judges: an embedded cluster started here, or a Dask scheduler's address.

``open()`` blocks until a Dask client is connected (the service calls it from its start-up thread);
nothing is started before it. Embedded: a scheduler on 127.0.0.1 and ``judges`` Dask workers, each
its own interpreter started with ``subprocess`` (``grader.service.embedded``), which stop with the
service or when this process ends. They warm up with the settings the tasks carry.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from grader.faults import GraderFault
from grader.service.judge import WARM_MODES_ENV
from grader.service.settings import ServiceSettings

CONNECT_SECONDS = 60.0
JUDGES_CACHE_SECONDS = 1.0  # the page asks often; the scheduler is asked at most once a second


def _allowed_failures(dask_scheduler: Any) -> int:
    return dask_scheduler.allowed_failures


class ClusterConnection:
    """A Dask client to the judges, once ``open()`` has connected it; ``fault`` if it could not."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.embedded = None  # the EmbeddedCluster, when this process started the judges
        self.client = None
        self.allowed_failures = 1  # judges that may die under one task before it fails (the scheduler's)
        self.fault: GraderFault | None = None
        self.connected = threading.Event()
        self._closing = threading.Event()
        self._lock = threading.Lock()  # a close() while open() starts the cluster stops what it started
        self._judges_cache = (0.0, 0)

    def open(self) -> None:
        """Start the embedded cluster (if no scheduler is set) and connect; ``GraderFault`` if that fails."""
        try:
            address, security = self.settings.scheduler, None  # a named cluster: Dask's own configuration
            if address is None:
                from grader.service.embedded import EmbeddedCluster

                # The judges warm up with the settings the tasks carry (a --timeout of the CLI).
                environment = {
                    "POSLAB_GRADER_TIMEOUT": repr(self.settings.grader.timeout),
                    WARM_MODES_ENV: ",".join(self.settings.warm_modes),
                }
                with self._lock:
                    if self._closing.is_set():
                        raise GraderFault("the grading service was closed before its cluster started")
                    self.embedded = EmbeddedCluster(
                        self.settings.judges, environment, scheduler_in_process=self.settings.scheduler_in_process
                    )
                self.embedded.launch()  # a close() from now on stops its processes
            from distributed import Client  # (0.4 s: after the launch, while the cluster starts)

            if self.embedded is not None:
                address = self.embedded.wait_until_listening()
                security = self.embedded.security  # the embedded cluster takes only this certificate
            self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False, security=security)
            self.allowed_failures = self.client.run_on_scheduler(_allowed_failures)
        except BaseException as error:  # noqa: BLE001 - reported to every waiting job and to callers
            self.fault = (
                error if isinstance(error, GraderFault) else GraderFault(f"the grading cluster did not start: {error}")
            )
            raise self.fault from None
        if self._closing.is_set():  # closed while it connected
            self.client.close(timeout=10)
            return
        self.connected.set()

    def problem(self) -> GraderFault | None:
        """Why no judge can grade here (the cluster did not start, or its judges cannot), if so."""
        return self.fault or (self.embedded.fault if self.embedded is not None else None)

    def judges(self) -> int:
        """Judges connected to the scheduler now (each joins once warm)."""
        if not self.connected.is_set() or self._closing.is_set():
            return 0
        checked, count = self._judges_cache
        if time.monotonic() - checked > JUDGES_CACHE_SECONDS:
            try:
                count = sum(self.client.nthreads().values())
            except Exception:  # noqa: BLE001 - a scheduler that went away: no judges
                count = 0
            self._judges_cache = (time.monotonic(), count)
        return count

    def wait_for_judge(self, timeout: float) -> None:
        """Wait until a judge is warm; ``GraderFault`` if none can start within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.judges() == 0:
            if (problem := self.problem()) is not None:
                raise problem
            if time.monotonic() > deadline:
                raise GraderFault("no grader judge became ready in time (see the judges' logs)")
            time.sleep(0.1)

    def close(self) -> None:
        with self._lock:
            self._closing.set()
        if self.client is not None:
            self.client.close(timeout=10)
        if self.embedded is not None:
            self.embedded.close()
