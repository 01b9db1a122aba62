"""A Dask scheduler on a thread of this process: the CLI's embedded cluster, one interpreter fewer.

``python -m grader grade`` starts its own judges and needs a scheduler only for as long as it runs. In
a process of its own, the scheduler cost a ``grade`` of 40 submissions half a second of CPU (Python
and Dask's import, again); here it shares the client's import and runs its own event loop on a daemon
thread. The app keeps a scheduler process: its script runs would share the scheduler's interpreter.
It listens as the process would: TLS only, on 127.0.0.1, with the cluster's certificate and
configuration, and writes its address to the scheduler file the judges read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from pathlib import Path

from grader.faults import GraderFault
from grader.service.certificates import ClusterCertificates

DASK_LOGGER = "distributed"  # every Dask logger is under it, and its handlers are Dask's own


class SchedulerThread:
    """``start()`` returns the address once the scheduler listens; ``close()`` stops it."""

    def __init__(
        self,
        certificates: ClusterCertificates,
        config: dict[str, object],
        scheduler_file: Path,
        log_file: Path,
        http_address: str,
    ) -> None:
        self.certificates = certificates
        self.http_address = http_address  # Dask's HTTP server, which serves nothing here (no routes)
        self.config = config
        self.scheduler_file = scheduler_file
        self.log_file = log_file
        self.address: str | None = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="grader-scheduler", daemon=True)
        self._log_handler: logging.Handler | None = None

    def start(self, timeout: float) -> str:
        self._log_to_file()
        self._thread.start()
        if not self._ready.wait(timeout) or self.address is None:
            raise GraderFault(f"the grading scheduler did not start: {self.error or 'no answer in time'}")
        return self.address

    def alive(self) -> bool:
        return self._thread.is_alive()

    def close(self, seconds: float = 10.0) -> None:
        """Stop the scheduler and wait for its thread; safe to call twice."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # its loop ended meanwhile: nothing left to stop
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread.is_alive():
            self._thread.join(seconds)
        if self._log_handler is not None:
            dask_logger = logging.getLogger(DASK_LOGGER)
            dask_logger.removeHandler(self._log_handler)
            for handler in dask_logger.handlers:
                handler.removeFilter(self._elsewhere)
            self._log_handler.close()
            self._log_handler = None

    def _log_to_file(self) -> None:
        """Dask's log records made on the scheduler's thread go to its file, as a scheduler process's would,
        and not to the terminal, where Dask's logging writes this process's own (the CLI's client)."""
        self._log_handler = logging.FileHandler(self.log_file, encoding="utf-8")
        self._log_handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
        self._log_handler.addFilter(self._on_this_thread)
        dask_logger = logging.getLogger(DASK_LOGGER)
        for handler in dask_logger.handlers:
            handler.addFilter(self._elsewhere)
        dask_logger.addHandler(self._log_handler)

    def _on_this_thread(self, record: logging.LogRecord) -> bool:
        return record.thread == self._thread.ident

    def _elsewhere(self, record: logging.LogRecord) -> bool:
        return record.thread != self._thread.ident

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # noqa: BLE001 - told to start(), which raises it as a fault
            self.error = error
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        import dask
        from distributed import Scheduler

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        with dask.config.set(self.config):  # read as the scheduler is built (a process reads its environment)
            scheduler = Scheduler(
                host="127.0.0.1",
                port=0,
                protocol="tls",
                security=self.certificates.security("scheduler"),
                dashboard=False,
                dashboard_address=self.http_address,
                scheduler_file=str(self.scheduler_file),
            )
            await scheduler
        try:
            self.address = scheduler.address
            self._ready.set()
            await self._stop.wait()
        finally:
            await scheduler.close()
