"""The sandbox worker lives as long as the judge's process, whichever of its threads started it.

The worker dies with its judge (``PR_SET_PDEATHSIG``, and bubblewrap's ``--die-with-parent``), and
Linux ties that to the *thread* that started it. A worker started from a thread that then ended
(a grading thread of ``grade_in_parallel``, a server's request thread) was killed with it, and the
next grading paid for a new start (bubblewrap, torch imported: seconds). Needs the isolation the
environment chooses: bubblewrap here (skips with the reason locally, fails under CI=true).
"""

from __future__ import annotations

import threading

from grader.api import Grader, load_submission
from grader.settings import GraderSettings
from tests.hostile._support import PROBE_MAX, ProbeSuite, reference_submission, require_bwrap


def test_a_worker_started_from_a_thread_that_ended_still_grades():
    require_bwrap()
    with Grader(GraderSettings.from_env(), suite=ProbeSuite) as grading:
        started = threading.Thread(target=grading.start)
        started.start()
        started.join()
        worker = grading.worker
        result = grading.grade(load_submission({"solution.py": reference_submission()}, "after"))
        assert grading.worker is worker and worker.alive(), "the worker died with the thread that started it"
        assert result.score == PROBE_MAX
