"""A Dask cluster on this machine, started with ``subprocess``: a scheduler and N warm judges.

Each process is Dask's own command (``dask scheduler`` / ``dask worker --preload grader.service.judge``)
run through ``grader.service.launch``, which ends it when the program that started it ends. The grade
command runs its scheduler on a thread instead (``scheduler_in_process``, ``grader.service.scheduler_thread``).
Nothing forks the caller (the Streamlit process or the CLI) and nothing uses ``multiprocessing``.
The scheduler and the judges listen on 127.0.0.1 only, with no dashboard, and the HTTP
server Dask starts in each serves nothing, on loopback. A judge that dies is started again.

Loopback is not enough on a shared machine: any local user could connect and run a function on a
judge. So the cluster speaks only Dask's TLS, with a certificate made at start-up (``certificates``)
and written to files only this user can read (0600, in this cluster's 0700 folder);
Dask's TLS is mutual, so a client without that certificate is refused (``security`` is the app's).
The scheduler lets a task fail on one judge only (``allowed-failures: 1``: the second judge to
die under the same submission ends it) and gives each judge one task at a time
(``worker-saturation: 1.0``), so a judge that dies had only its current job.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from grader.faults import GraderFault
from grader.service.certificates import private_certificates
from grader.service.cluster_config import CLUSTER_CONFIG, HTTP_ADDRESS, dask_environment, judge_core
from grader.service.judge import PRELOAD, READY_LOG
from grader.service.scheduler_thread import SchedulerThread
from poslab.config import PROJECT_ROOT

logger = logging.getLogger(__name__)

SCHEDULER_START_SECONDS = 60.0
FAILED_STARTS_BEFORE_GIVING_UP = 3  # judges that died before ever joining: something is broken here
# Dask bounds a judge's whole start by its death timeout, and the start includes the preload's warm-up
# (a sandbox worker per mode, the suite's drawn inputs): on a loaded 2-core machine that took over 60 s.
JUDGE_START_SECONDS = 300
SUPERVISE_EVERY_SECONDS = 0.5


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _written_address(scheduler_file: Path) -> str | None:
    """The scheduler's address once its file is written whole: the file exists before its JSON does."""
    try:
        return json.loads(scheduler_file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


def _stop(processes: list[subprocess.Popen], seconds: float) -> None:
    """Terminate ``processes``, wait up to ``seconds`` for them all, then kill what is left."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + seconds
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
        if process.stdin is not None:
            process.stdin.close()


class EmbeddedCluster:
    """``start()`` returns the scheduler's address once it listens; judges join as they warm up."""

    def __init__(
        self, judges: int, environment: dict[str, str] | None = None, scheduler_in_process: bool = False
    ) -> None:
        if judges < 1:
            raise ValueError(f"an embedded cluster needs at least one judge, got {judges}")
        self.folder = Path(tempfile.mkdtemp(prefix="poslab-dask-"))  # 0700
        self.certificates = private_certificates(self.folder / "tls")
        self.tls_options = self.certificates.options()
        self._security: Any = None
        self.env = {**dask_environment(), **(environment or {}), "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
        self.scheduler: subprocess.Popen | None = None
        # The CLI's: a scheduler on a thread of this process (``SchedulerThread``), started
        # in wait_until_listening, once the caller has imported Dask.
        self.scheduler_in_process = scheduler_in_process
        self.scheduler_thread: SchedulerThread | None = None
        self.judges: list[subprocess.Popen | None] = [None] * judges
        self.address: str | None = None
        self.failed_starts = 0
        self.fault: GraderFault | None = None
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._supervisor: threading.Thread | None = None
        atexit.register(self.close)

    @property
    def security(self) -> Any:
        """A client's ``distributed.Security`` for this cluster (the only certificate it takes)."""
        if self._security is None:
            self._security = self.certificates.security()
        return self._security

    def _launch(self, role: str, arguments: list[str], log_name: str) -> subprocess.Popen:
        log = open(self.folder / log_name, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            return subprocess.Popen(
                [sys.executable, "-m", "grader.service.launch", role, *arguments],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=PROJECT_ROOT,
                env=self.env,
                start_new_session=True,
            )
        finally:
            log.close()

    def start(self) -> str:
        """``launch()``, then ``wait_until_listening()``: the scheduler's address."""
        self.launch()
        return self.wait_until_listening()

    def launch(self) -> None:
        """Start the scheduler and the judges together, and return at once (a judge reads the scheduler's
        address from its file, so its warm-up overlaps the scheduler's start)."""
        with self._lock:  # a close() meanwhile has stopped what was started and removed the folder: start nothing
            if self.closing.is_set():
                raise GraderFault("the grading cluster was closed while it started")
            if not self.scheduler_in_process:
                self._launch_scheduler()
            for index in range(len(self.judges)):
                self._start_judge(index)

    def wait_until_listening(self) -> str:
        """The scheduler's address once it listens; then the judges are watched (``_supervise``)."""
        try:
            if self.scheduler_in_process:
                self._start_scheduler_thread()
            else:
                self._wait_for_scheduler()
        except GraderFault as fault:
            self.fault = fault  # its logs stay (_remove_folder)
            self.close()
            raise
        self._supervisor = threading.Thread(target=self._supervise, name="grader-judges", daemon=True)
        self._supervisor.start()
        return self.address

    def start_scheduler(self) -> str:
        """The scheduler alone, once it listens: its address."""
        if self.scheduler_in_process:
            self._start_scheduler_thread()
            return self.address
        self._launch_scheduler()
        return self._wait_for_scheduler()

    @property
    def scheduler_file(self) -> Path:
        return self.folder / "scheduler.json"

    def _launch_scheduler(self) -> None:
        self.scheduler = self._launch(
            "scheduler",
            [
                "--protocol",
                "tls",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                *self.tls_options,
                "--no-dashboard",
                "--dashboard-address",
                HTTP_ADDRESS,
                "--scheduler-file",
                str(self.scheduler_file),
            ],
            "scheduler.log",
        )

    def _wait_for_scheduler(self) -> str:
        deadline = time.monotonic() + SCHEDULER_START_SECONDS
        while (address := _written_address(self.scheduler_file)) is None:
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise GraderFault(f"the grading scheduler did not start:\n{_tail(self.folder / 'scheduler.log')}")
            time.sleep(0.05)
        self.address = address
        return address

    def _start_scheduler_thread(self) -> None:
        with self._lock:
            if self.closing.is_set():
                raise GraderFault("the grading cluster was closed while it started")
            self.scheduler_thread = SchedulerThread(
                self.certificates, CLUSTER_CONFIG, self.scheduler_file, self.folder / "scheduler.log", HTTP_ADDRESS
            )
        self.address = self.scheduler_thread.start(SCHEDULER_START_SECONDS)

    def _start_judge(self, index: int) -> None:
        arguments = [
            "--scheduler-file",
            str(self.scheduler_file),
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--dashboard-address",
            HTTP_ADDRESS,
            "--memory-limit",
            "0",
            "--host",
            "127.0.0.1",
            "--preload",
            PRELOAD,
            "--name",
            f"judge-{index}",
            "--death-timeout",
            str(JUDGE_START_SECONDS),
            "--local-directory",
            str(self.folder / f"judge-{index}"),
            *self.tls_options,
        ]
        self.judges[index] = self._launch(
            "worker", [*judge_core(index, len(self.judges)), *arguments], f"judge-{index}.log"
        )

    def _supervise(self) -> None:
        """Start a judge again when it dies (killed, out of memory); give up if none can start."""
        while not self.closing.wait(SUPERVISE_EVERY_SECONDS):
            with self._lock:
                if self.closing.is_set():
                    return
                for index, process in enumerate(self.judges):
                    if process is None or process.poll() is None:
                        continue
                    log = self.folder / f"judge-{index}.log"
                    if READY_LOG not in _tail(log, 10_000):
                        self.failed_starts += 1
                    if self.failed_starts >= FAILED_STARTS_BEFORE_GIVING_UP:
                        self.fault = GraderFault(f"the grader's judges could not start:\n{_tail(log)}")
                        logger.error("%s", self.fault)
                        return
                    logger.warning("judge-%d ended (exit code %s); starting it again", index, process.returncode)
                    self._start_judge(index)

    def close(self) -> None:
        self.closing.set()
        with self._lock:
            # The judges first: a judge that leaves says so to its scheduler, and with the scheduler
            # gone as well it waited on that connection until killed (10 s, one close in three).
            judges = [process for process in self.judges if process is not None]
            _stop(judges, seconds=10)
            _stop([self.scheduler] if self.scheduler is not None else [], seconds=10)
            if self.scheduler_thread is not None:
                self.scheduler_thread.close()
            self._remove_folder()
        atexit.unregister(self.close)

    def _remove_folder(self) -> None:
        """The cluster's folder (its key, its logs) goes with it; after a fault its logs stay, for whoever
        reads the fault's message (every run left one folder behind in the system's temporary folder)."""
        if self.fault is not None:
            logger.warning("the grading cluster's logs are kept in %s", self.folder)
        else:
            shutil.rmtree(self.folder, ignore_errors=True)
