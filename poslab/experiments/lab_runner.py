"""The extrapolation lab's live quick run, in a child process of its own.

The app's sessions share one process, and in it one torch thread setting and one interpreter
lock. A quick run trains five models for a quarter of a minute or more: in the app's process it
would either change the thread setting under the other sessions or hold the lock that guards it
(``poslab.threads``) and queue every other session's torch work behind it, and its Python loop
would compete for the interpreter with every page. So the run is the command line's own quick
mode, ``python -m poslab.experiments.extrapolation --quick --progress json``, in a child process
that sets its own threads; the app's process only reads its progress lines and its files.

At most ``slots`` runs go at once (default: one per core). A run that finds every slot taken waits
and says so: a class pressing the button together would otherwise start dozens of processes of
a few hundred MB each. The time-left figure comes from the run's own pace, and the estimate
before a run from the last run that finished on this server: nothing measured elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from poslab.config import PROJECT_ROOT
from poslab.experiments.config import LiveQuickRun
from poslab.experiments.extrapolation import RunProgress
from poslab.experiments.result_files import load_results
from poslab.experiments.results import ExtrapolationResults

STOP_GRACE_S = 5.0  # a child asked to stop gets this long before it is killed
WAIT_POLL_S = 0.5  # how often a run waiting for a slot says so


@dataclass(frozen=True)
class LabProgress:
    fraction: float
    message: str


LabProgressCallback = Callable[[LabProgress], None]


@dataclass(frozen=True)
class FinishedRun:
    wall_s: float  # from the button to the results, child start-up included
    finished_at: float  # time.time()
    runs_at_once: int  # live runs on this server when it started, itself included


class QuickRunFailed(RuntimeError):
    """The child process ended without results; the message says how."""


class Pace:
    """Time left from the run's own pace: the mean time per finished model, times the models to go."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.last_done_at: float | None = None
        self.runs_done = 0

    def update(self, progress: RunProgress, now: float) -> str:
        if progress.runs_done > self.runs_done:
            self.runs_done, self.last_done_at = progress.runs_done, now
        if self.last_done_at is None:
            return "timing the first model"
        per_run = (self.last_done_at - self.started) / self.runs_done
        left = per_run * (progress.runs - self.runs_done) - (now - self.last_done_at)
        return "almost done" if left < 1.5 else f"about {left:.0f} s left at this run's pace"


class QuickRuns:
    """The server's live quick runs: one object per app process, shared by its sessions."""

    def __init__(
        self, slots: int | None = None, python: str = sys.executable, live: LiveQuickRun | None = None
    ) -> None:
        self.slots = slots or max(1, os.cpu_count() or 1)
        self.live = live or LiveQuickRun()  # what every run trains, unless a run says
        self._free = threading.BoundedSemaphore(self.slots)
        self._lock = threading.Lock()  # guards the two fields below, never held while waiting
        self._running = 0
        self._last: FinishedRun | None = None
        self.python = python

    @property
    def running(self) -> int:
        with self._lock:
            return self._running

    @property
    def last(self) -> FinishedRun | None:
        with self._lock:
            return self._last

    def command(self, out: Path, seed: int, steps: int | None, encodings: tuple[str, ...]) -> list[str]:
        command = [
            self.python,
            "-m",
            "poslab.experiments.extrapolation",
            "--out",
            str(out),
            "--quick",
            "--seeds",
            str(seed),
            "--jobs",
            "1",
            "--progress",
            "json",
        ]
        if steps:
            command += ["--steps", str(steps)]
        return command + (["--encodings", *encodings] if encodings else [])

    def run(
        self, seed: int, on_progress: LabProgressCallback, steps: int | None = None, encodings: tuple[str, ...] = ()
    ) -> ExtrapolationResults:
        """Train and test the quick mode in a child process; ``steps``/``encodings`` shorten it."""
        steps, encodings = steps or self.live.steps, encodings or self.live.encodings
        started = time.monotonic()
        while not self._free.acquire(timeout=WAIT_POLL_S):
            on_progress(
                LabProgress(
                    0.0,
                    f"waiting for a free slot: {self.slots} quick run(s) at a time on this "
                    f"server, all taken ({time.monotonic() - started:.0f} s so far)",
                )
            )
        try:
            with self._lock:
                self._running += 1
                at_once = self._running
            with tempfile.TemporaryDirectory(prefix="poslab-quick-") as folder:
                out = Path(folder) / "quick.csv"
                self._run_child(self.command(out, seed, steps, encodings), Path(folder), on_progress)
                results = load_results(out)
            with self._lock:
                self._last = FinishedRun(round(time.monotonic() - started, 1), time.time(), at_once)
            return results
        finally:
            with self._lock:
                self._running -= 1
            self._free.release()

    def _run_child(self, command: list[str], folder: Path, on_progress: LabProgressCallback) -> None:
        env = os.environ | {
            "PYTHONPATH": os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
        }
        on_progress(LabProgress(0.0, "starting a process for the run"))
        with (folder / "stderr.txt").open("w+", encoding="utf-8") as errors:
            child = subprocess.Popen(
                command,
                cwd=PROJECT_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=errors,
                stdin=subprocess.DEVNULL,
                text=True,
            )
            try:
                pace = None
                for line in child.stdout:  # one JSON object a line, until the child closes it
                    progress = RunProgress(**json.loads(line))
                    pace = pace or Pace(time.monotonic())
                    on_progress(
                        LabProgress(
                            progress.fraction, f"{progress.message} ({pace.update(progress, time.monotonic())})"
                        )
                    )
                code = child.wait()
            finally:
                _stop(child)
            if code != 0:
                errors.seek(0)
                tail = errors.read().strip().splitlines()[-3:]
                raise QuickRunFailed(
                    f"the quick run's process ended with exit code {code}" + (f": {' '.join(tail)}" if tail else "")
                )


def _stop(child: subprocess.Popen) -> None:
    """End the child if it still runs (the session left, or the page raised): ask, then insist."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    if child.stdout is not None:
        child.stdout.close()
