"""The judge: a Dask worker that grades, one submission at a time, with warm graders.

    dask worker tcp://scheduler:8786 --nthreads 1 --preload grader.cluster
    dask worker tcp://scheduler:8786 --nthreads 1 --preload grader.service.judge  # the same, torch later

This module imports torch only in its warm-up: the service's clients import it too (its task and
its task function), and a client (the app's server aside, ``python -m grader grade``) needs no
torch. ``grader.cluster`` imports it at once, which lets a judge started beside its scheduler warm
while the scheduler starts.

At start-up (before the judge joins the scheduler, so a joined judge is a warm one) the preload
starts a ``grader.api.Grader`` per warm mode, each with its sandbox worker (torch imported once),
and says in the Dask worker's log which isolation it will use: ``bwrap`` when bubblewrap works on
this machine, else the fallback, with the reason. Each Dask task is one submission's whole
grading (``grade_on_judge``), run on this warm judge one at a time (``--nthreads 1``). Tasks carry
trusted data only: a ``JudgeTask`` (the ``Submission`` as handed in, and the settings) in,
``SubmissionResult.to_dict()`` out. Student code runs only in the sandboxed child, as with the CLI.

``POSLAB_GRADER_WARM_MODES`` (default ``hidden,public``) says which sandbox workers the judge
starts before it joins: ``hidden`` for graded submissions, ``public`` for the app's practice runs
(a cold one costs seconds at the first practice run). The CLI's own judges warm ``hidden`` only.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.settings import GraderSettings
from grader.submissions import Submission
from grader.vocabulary import Isolation, IsolationSetting
from poslab.vocabulary import GradingMode

if TYPE_CHECKING:
    from grader.api import Grader

logger = logging.getLogger("distributed.grader")  # under "distributed": the Dask worker's log shows it

PRELOAD = "grader.cluster"  # what ``dask worker --preload`` names to make a judge: this, with torch
JUDGE_ATTRIBUTE = "poslab_judge"  # the Dask worker's attribute that holds its Judge
WARM_MODES_ENV = "POSLAB_GRADER_WARM_MODES"
READY_LOG = "grader judge ready"  # logged once warm; the embedded cluster looks for it


def load_suite(spec: str | None) -> Any:
    """``None`` for the hidden suite, or ``"module:attribute"`` (a stand-in suite, for tests)."""
    if not spec:
        return None
    module, _, attribute = spec.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


@dataclass(frozen=True)
class JudgeTask:
    """One Dask task: grade ``submission`` (the value the service was handed) with these settings."""

    submission: Submission
    exercises: tuple[str, ...]
    mode: GradingMode
    settings: GraderSettings
    suite: str | None = None  # "module:attribute" of a stand-in suite (tests); None: the hidden suite


class Judge:
    """The warm Graders of one judge, one per (mode, settings, suite); one task at a time."""

    def __init__(self) -> None:
        self.graders: dict[tuple, Grader] = {}
        self.lock = threading.Lock()

    def grader_for(self, mode: GradingMode, settings: GraderSettings, suite: str | None) -> Grader:
        key = (mode, settings, suite)
        if key not in self.graders:
            from grader.api import Grader  # torch: the client that imports JudgeTask needs none of it

            grading = Grader(settings, mode=mode, suite=load_suite(suite))
            # The suite runs here, in the judge: another suite's warm sandbox worker serves it as well.
            grading.worker = next(
                (
                    other.worker
                    for (other_mode, other_settings, _), other in self.graders.items()
                    if (other_mode, other_settings) == (mode, settings)
                ),
                None,
            )
            self.graders[key] = grading
        return self.graders[key]

    def warm_up(self, settings: GraderSettings, mode: GradingMode = GradingMode.HIDDEN) -> Isolation:
        grading = self.grader_for(mode, settings, None)
        grading.suite_hash()  # imports the hidden suite now, not during the first student's wait
        getattr(grading.suite, "prepare", lambda: None)()  # and draws its inputs (grader.suite.prepare)
        return grading.start()

    def grade(self, task: JudgeTask) -> dict:
        with self.lock:
            grading = self.grader_for(task.mode, task.settings, task.suite)
            return grading.grade(task.submission, task.exercises).to_dict()

    def close(self) -> None:
        for grading in self.graders.values():
            grading.close()  # a shared sandbox worker is closed by the first; closing it again does nothing
        self.graders.clear()


def grade_on_judge(task: JudgeTask) -> dict:
    """The Dask task: grade one submission on this Dask worker's warm judge."""
    from distributed import get_worker

    dask_worker = get_worker()
    judge = getattr(dask_worker, JUDGE_ATTRIBUTE, None)
    if judge is None:  # a Dask worker started without the preload: a cold first grading
        logger.warning("this Dask worker was started without --preload %s; starting a judge now", PRELOAD)
        judge = Judge()
        setattr(dask_worker, JUDGE_ATTRIBUTE, judge)
    return judge.grade(task)


def _isolation_problem(settings: GraderSettings) -> str | None:
    try:
        from grader.sandbox import bwrap_problem
    except ImportError:
        return None
    return bwrap_problem(settings)


def planned_isolation(settings: GraderSettings) -> tuple[Isolation, str | None]:
    """How a judge on this machine keeps a submission apart (``bwrap``, else the fallback, as the
    settings and bubblewrap's check decide), and, when not with bubblewrap, why not."""
    from grader.sandbox import choose_isolation

    isolation = choose_isolation(settings)
    if isolation == Isolation.BWRAP:
        return isolation, None
    if settings.isolation != IsolationSetting.AUTO:
        return isolation, f"POSLAB_GRADER_ISOLATION is {settings.isolation}"
    return isolation, _isolation_problem(settings) or "bubblewrap does not work here"


def warm_modes() -> list[GradingMode]:
    """The modes of ``POSLAB_GRADER_WARM_MODES`` (unknown names are ignored; none listed: hidden)."""
    raw = os.environ.get(WARM_MODES_ENV, ",".join(GradingMode))
    named = {part.strip() for part in raw.split(",")}
    return [mode for mode in GradingMode if mode in named] or [GradingMode.HIDDEN]


def keep_freed_memory() -> bool:
    """This process's malloc keeps freed memory as the sandbox worker's does
    (``grader.sandbox.isolation.MALLOC_TUNABLES``); False where the C library has no glibc ``mallopt``."""
    import ctypes

    from grader.sandbox.isolation import MALLOC_MMAP_THRESHOLD, MALLOC_TRIM_THRESHOLD

    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(m_mmap_threshold, MALLOC_MMAP_THRESHOLD)) and bool(
        mallopt(m_trim_threshold, MALLOC_TRIM_THRESHOLD)
    )


def batch_scheduling() -> int:
    """Every thread of this process on Linux's SCHED_BATCH, and so all it starts (its sandbox worker, their
    children); returns how many threads (0 where there is no such policy).

    A judge and its child wake each other at every call. A woken SCHED_NORMAL task preempts the one that
    woke it, so each call cost two context switches, and each switch cost both processes their caches. A
    woken SCHED_BATCH task waits for its turn instead: the child answers every call already in its socket,
    then the judge checks every answer already in its own (with ``session.PIPELINED_CALLS`` in flight, a
    grading took 10 % less CPU). Its share of the CPU is the same."""
    policy = getattr(os, "SCHED_BATCH", None)
    if policy is None or not os.path.isdir("/proc/self/task"):
        return 0
    count = 0
    for thread in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setscheduler(int(thread), policy, os.sched_param(0))
            count += 1
    return count


def dask_setup(dask_worker: Any) -> None:
    """Dask's preload hook (the name and argument are Dask's): make this Dask worker a warm judge."""
    import gc

    import torch

    torch.set_num_threads(1)  # one judge per core: the hidden tests must not oversubscribe it
    keep_freed_memory()
    batch_scheduling()  # before the sandbox workers start: they and their children inherit it
    settings = GraderSettings.from_env()
    judge = Judge()
    gc.disable()  # (grader.cluster disabled it before the imports already)
    try:
        # A practice run ("Run the public tests") on a judge without a warm public sandbox worker took ~9 s in
        # the browser, so the app's judges warm both; the CLI's need the hidden one only.
        isolation = [judge.warm_up(settings, mode) for mode in warm_modes()][0]
    finally:
        gc.freeze()  # torch, the suite, its draws and plans: never garbage, never scanned again
        gc.enable()
    setattr(dask_worker, JUDGE_ATTRIBUTE, judge)
    if isolation == Isolation.BWRAP:
        logger.info("%s: isolation bwrap (bubblewrap works on this machine)", READY_LOG)
    else:
        problem = _isolation_problem(settings)
        logger.warning(
            "%s: isolation %s; bubblewrap is not used here%s. Install bubblewrap "
            "(apt-get install bubblewrap) before grading a real class.",
            READY_LOG,
            isolation,
            f" ({problem})" if problem else "",
        )


def dask_teardown(dask_worker: Any) -> None:
    """Dask's preload hook: close the judge's sandbox workers."""
    judge = getattr(dask_worker, JUDGE_ATTRIBUTE, None)
    if judge is not None:
        judge.close()
