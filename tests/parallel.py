"""How the suite runs on two processes (pytest-xdist; ``pytest.ini`` sets ``-n 2 --dist loadscope``).

* Each test module runs whole on one worker, so that its module-scoped fixtures (a warm sandbox
  worker, a graded run, a built package) start once; the browser tests (``tests/browser/``) run
  together on one worker: one app, one judge and one Chromium for all of them.
* The units that start processes of their own and take longest are handed out first
  (``LONG_UNITS``, measured with ``--durations``), so that no worker is left with a long one at
  the end. The list only orders: a unit that is not on it runs all the same.
* Each worker gets a range of sandbox uids of its own (``POSLAB_GRADER_UID_BASE``), above the
  default range. A test that looks for sandboxed processes outliving a run
  (``tests/test_grader_hostile.py``) looks in its own worker's range, so it sees its own
  sandboxes and never another worker's.

``pytest -n 0`` runs everything in one process, as before.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

from grader.settings import GraderSettings

SHARED_UNITS = ("tests/browser/",)
LONG_UNITS = (
    "tests/browser/",
    "tests/test_service_dask.py",
    "tests/test_grader_cli.py",
    "tests/test_corpus.py",
    "tests/test_grader_hostile.py",
    "tests/test_grader_sandbox.py",
    "tests/test_app_exercise.py",
    "tests/test_gradescope.py",
    "tests/test_suite_scores.py",
    "tests/test_extrapolation.py",
    "tests/test_exercises_public.py",
    "tests/test_store_concurrency.py",
)  # longest first
# The grader gives a judge's children uids from uid_base to uid_base + 2**30 - 1: a block of 256
# for each (judge pid % 65536, worker slot of 64), see grader/sandbox/worker_process.py.
SANDBOX_UID_SPAN = 1 << 30
LARGEST_UID = (1 << 32) - 2  # (uid_t)-1 means "no uid"


def worker_uid_base(worker_index: int) -> int:
    """The first sandbox uid of xdist worker ``worker_index``: one span above the previous worker's,
    the first above the default span (which tests that build ``GraderSettings()`` use)."""
    base = GraderSettings().uid_base + (worker_index + 1) * SANDBOX_UID_SPAN
    if base + SANDBOX_UID_SPAN - 1 > LARGEST_UID:
        raise pytest.UsageError(
            f"xdist worker {worker_index} has no sandbox uid range left: uids end at "
            f"{LARGEST_UID}; run with -n 2 or fewer"
        )
    return base


class ModuleScheduling(LoadScopeScheduling):
    """``--dist loadscope`` with the browser modules as one unit and the long units first."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return next((unit for unit in SHARED_UNITS if path.startswith(unit)), path)

    def _assign_work_unit(self, node) -> None:
        longest = next((unit for unit in LONG_UNITS if unit in self.workqueue), None)
        if longest is not None:
            self.workqueue.move_to_end(longest, last=False)
        super()._assign_work_unit(node)


def make_scheduler(config: pytest.Config, log) -> ModuleScheduling | None:
    """Ours for ``--dist loadscope`` (pytest.ini's); xdist's own for any other ``--dist`` given."""
    return ModuleScheduling(config, log) if config.getvalue("dist") == "loadscope" else None
