"""The Dask worker preload: one warm judge per Dask worker.

    dask worker tcp://scheduler:8786 --nthreads 1 --preload grader.cluster

At start-up (before the worker joins the scheduler, so a joined worker is a warm one) the preload
starts a ``grader.api.Grader`` with its sandbox worker (torch imported once), and says in the
worker's log which isolation it will use: ``bwrap`` when bubblewrap works on this machine, else
the fallback, with the reason. Each Dask task is one submission's whole grading
(``grade_on_judge``), run on this warm judge one at a time (``--nthreads 1``). Tasks carry
trusted data only: source text and settings in, ``SubmissionResult.to_dict()`` out. Student code
runs only in the sandboxed child, as with the CLI.

``POSLAB_GRADER_WARM_MODES`` (default ``hidden,public``) says which sandbox workers the judge
starts before it joins: ``hidden`` for graded submissions, ``public`` for the app's practice runs
(a cold one costs seconds at the first practice run). The CLI's own judges warm ``hidden`` only.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from dataclasses import asdict
from typing import Any

from grader.api import MODES, Grader, Submission
from grader.settings import GraderSettings

logger = logging.getLogger("distributed.grader")  # under "distributed": the worker's log shows it

JUDGE_ATTRIBUTE = "poslab_judge"
WARM_MODES_ENV = "POSLAB_GRADER_WARM_MODES"


def load_suite(spec: str | None) -> Any:
    """``None`` for the hidden suite, or ``"module:attribute"`` (a stand-in suite, for tests)."""
    if not spec:
        return None
    module, _, attribute = spec.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


class Judge:
    """The warm Graders of one Dask worker, one per (mode, settings, suite); one task at a time."""

    def __init__(self) -> None:
        self.graders: dict[tuple, Grader] = {}
        self.lock = threading.Lock()

    def grader_for(self, mode: str, settings: GraderSettings, suite: str | None) -> Grader:
        key = (mode, settings, suite)
        if key not in self.graders:
            grading = Grader(settings, mode=mode, suite=load_suite(suite))
            # The suite runs here, in the judge: another suite's warm sandbox worker serves it as well.
            grading.worker = next((other.worker for (other_mode, other_settings, _), other in self.graders.items()
                                   if (other_mode, other_settings) == (mode, settings)), None)
            self.graders[key] = grading
        return self.graders[key]

    def warm_up(self, settings: GraderSettings, mode: str = "hidden") -> str:
        grading = self.grader_for(mode, settings, None)
        grading.suite_hash()  # imports the hidden suite now, not during the first student's wait
        getattr(grading.suite, "prepare", lambda: None)()  # and draws its inputs (grader.suite.prepare)
        return grading.start()

    def grade(self, task: dict) -> dict:
        settings = GraderSettings(**task["settings"])
        submission = Submission(task["submission_id"], dict(task["files"]), tuple(task["problems"]))
        with self.lock:
            grading = self.grader_for(task["mode"], settings, task.get("suite"))
            return grading.grade(submission, task["exercises"]).to_dict()

    def close(self) -> None:
        for grading in self.graders.values():
            grading.close()  # a shared worker is closed by the first; closing it again does nothing
        self.graders.clear()


def task_for(submission: Submission, exercises: list[str] | None, mode: str, settings: GraderSettings,
             suite: str | None = None) -> dict:
    """What a Dask task carries: plain, trusted data."""
    return {"submission_id": submission.submission_id, "files": dict(submission.files),
            "problems": list(submission.problems), "exercises": exercises, "mode": mode,
            "settings": asdict(settings), "suite": suite}


def grade_on_judge(task: dict) -> dict:
    """The Dask task: grade one submission on this worker's warm judge."""
    from distributed import get_worker

    worker = get_worker()
    judge = getattr(worker, JUDGE_ATTRIBUTE, None)
    if judge is None:  # a worker started without --preload grader.cluster: a cold first grading
        logger.warning("this worker was started without --preload grader.cluster; starting a judge now")
        judge = Judge()
        setattr(worker, JUDGE_ATTRIBUTE, judge)
    return judge.grade(task)


def _isolation_problem(settings: GraderSettings) -> str | None:
    try:
        from grader.sandbox import bwrap_problem
    except ImportError:
        return None
    return bwrap_problem(settings)


def dask_setup(worker: Any) -> None:
    import torch

    torch.set_num_threads(1)  # one judge per core: the hidden tests must not oversubscribe it
    settings = GraderSettings.from_env()
    judge = Judge()
    # A practice run ("Run the public tests") on a judge without a warm public worker took ~9 s in
    # the browser, so the app's judges warm both; the CLI's need the hidden one only.
    isolation = [judge.warm_up(settings, mode) for mode in warm_modes()][0]
    setattr(worker, JUDGE_ATTRIBUTE, judge)
    if isolation == "bwrap":
        logger.info("grader judge ready: isolation bwrap (bubblewrap works on this machine)")
    else:
        problem = _isolation_problem(settings)
        logger.warning("grader judge ready: isolation %s; bubblewrap is not used here%s. Install bubblewrap "
                       "(apt-get install bubblewrap) before grading a real class.",
                       isolation, f" ({problem})" if problem else "")


def warm_modes() -> list[str]:
    """The modes of ``POSLAB_GRADER_WARM_MODES`` (unknown names are ignored; none listed: hidden)."""
    raw = os.environ.get(WARM_MODES_ENV, ",".join(MODES))
    return [mode for mode in MODES if mode in {part.strip() for part in raw.split(",")}] or ["hidden"]


def dask_teardown(worker: Any) -> None:
    judge = getattr(worker, JUDGE_ATTRIBUTE, None)
    if judge is not None:
        judge.close()
