"""How the suite runs on three processes (pytest-xdist; ``pytest.ini`` sets ``-n 3 --dist loadscope``).

* Three on two cores: a test waits a tenth of its time (a browser, a sandboxed child, a server), so
  two processes kept the cores 1.78 to 1.82 busy and three 1.96 to 1.98. Measured back to back
  (``CI=true pytest``, machine CPU from /proc/stat): 399 s against 452 s, then 373 s against 377 s,
  though three took more CPU (731 s against 673 s in the second pair).

* Each test module runs whole on one worker, so that its module-scoped fixtures (a warm sandbox
  worker, a graded run, a built package) start once. The browser modules are one unit
  (``SHARED_APP``), but for those that start an app of their own (``OWN_APPS``, each a unit): the
  shared app (``app_url`` in ``tests/browser/conftest.py``, a session fixture) starts once in the
  suite, its pages' caches warm once, and the walk through every page (``page_tour``,
  ``tests/browser/tour.py``) is made once. Other modules share a unit (``SHARED_UNITS``) when they
  share what starts once per process: one grader (``warm_grader`` in ``tests/conftest.py``: a
  sandbox worker) or one cluster (``shared_judges`` in ``tests/grading_fixtures.py``: a scheduler,
  a judge and its sandbox worker). Each starts once in the suite, not once in each process that
  happens to get one of its modules.
* The units that start processes of their own and take longest are handed out first
  (``LONG_UNITS``, measured with ``--durations``), so that no worker is left with a long one at
  the end. The list only orders: a unit that is not on it runs all the same.
* Every worker's graders give their children uids of the default range, but for the one module
  that looks for sandboxed processes outliving a run (``tests/test_grader_hostile.py``): it grades
  with a range of its own (``tests/hostile/_support.py``), so it sees its own sandboxes and never
  another worker's, however many workers run.

``pytest -n 0`` runs everything in one process, as before.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadScopeScheduling

BROWSER = "tests/browser/"
SHARED_APP = "tests/browser/shared_app"  # every browser module but those with an app of their own
OWN_APPS = (
    "tests/browser/test_oidc_login.py",
    "tests/browser/test_class_attacks.py",
    "tests/browser/test_assignment_flow.py",
    "tests/browser/test_instructor_console.py",
)
# A unit's name, and the modules it holds: they run together on one worker.
SHARED_UNITS = {
    "tests/warm_grader": (
        "tests/test_corpus.py",
        "tests/test_fairness.py",
        "tests/test_t5_exercise.py",
        "tests/test_app_feedback.py",
        "tests/test_acting_on_class.py",
    ),
    "tests/shared_judges": (
        "tests/test_grader_cli.py",
        "tests/test_lms_roundtrip.py",
        "tests/test_assignments_acceptance.py",
        "tests/test_app_exercise.py",
    ),
}
LONG_UNITS = (
    SHARED_APP,
    "tests/warm_grader",
    "tests/browser/test_oidc_login.py",
    "tests/shared_judges",
    "tests/test_service_dask.py",
    "tests/test_gradescope.py",
    "tests/browser/test_class_attacks.py",
    "tests/browser/test_assignment_flow.py",
    "tests/browser/test_instructor_console.py",
    "tests/test_class_server.py",
    "tests/test_grader_hostile.py",
    "tests/test_lab_runner.py",
    "tests/test_store.py",
    "tests/test_extrapolation.py",
    "tests/test_cluster_tls.py",
    "tests/test_suite_scores.py",
    "tests/test_mutation_tool.py",
    "tests/test_signin_server.py",
    "tests/test_new_exercise.py",
    "tests/test_grader_sandbox.py",
    "tests/test_listening_sockets.py",
    "tests/test_exercises_public.py",
    "tests/test_store_concurrency.py",
)  # longest first


class ModuleScheduling(LoadScopeScheduling):
    """``--dist loadscope`` with the shared units and the long units first."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        if path.startswith(BROWSER) and path not in OWN_APPS:
            return SHARED_APP
        return next((unit for unit, modules in SHARED_UNITS.items() if path in modules), path)

    def _assign_work_unit(self, node) -> None:
        longest = next((unit for unit in LONG_UNITS if unit in self.workqueue), None)
        if longest is not None:
            self.workqueue.move_to_end(longest, last=False)
        super()._assign_work_unit(node)


def make_scheduler(config: pytest.Config, log) -> ModuleScheduling | None:
    """Ours for ``--dist loadscope`` (pytest.ini's); xdist's own for any other ``--dist`` given."""
    return ModuleScheduling(config, log) if config.getvalue("dist") == "loadscope" else None
