"""One warm grading cluster per test process, for the tests that run ``python -m grader grade``
with the stand-in suite and are about what the command writes, not how its judges start.

``grade`` without ``--scheduler`` starts a scheduler and its judges (each imports torch and warms a
sandbox worker) and stops them when it ends: about 20 s a run on a loaded machine. These tests
pass ``--scheduler`` with the address of ``shared_judges`` instead, the way an instructor grades
on a cluster. ``tests/test_grader_cli.py`` keeps a run that starts its own judges.

Use: ``with shared_judges() as address: cli.main(["grade", ..., "--scheduler", address], suite=...)``.

``on_the_warm_worker(warm_grader, suite, **settings)`` grades with another suite or settings on the sandbox worker of
``warm_grader`` (``tests/conftest.py``), as a judge serves every suite with one warm worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any


@cache
def _embedded_cluster():
    """Started at the first use in this process, stopped when the process ends (its own atexit)."""
    from grader.service.embedded import EmbeddedCluster
    from grader.service.judge import WARM_MODES_ENV

    cluster = EmbeddedCluster(1, {WARM_MODES_ENV: "hidden"})
    cluster.start()
    return cluster


@contextmanager
def shared_judges() -> Iterator[str]:
    """The address of this process's warm judges, with their certificate as Dask's configuration
    inside the block only (``grade --scheduler`` connects with Dask's own settings)."""
    import dask

    cluster = _embedded_cluster()
    security = cluster.security
    with dask.config.set(
        {
            "distributed.comm.require-encryption": True,
            "distributed.comm.tls.ca-file": security.tls_ca_file,
            "distributed.comm.tls.client.cert": security.tls_client_cert,
            "distributed.comm.tls.client.key": security.tls_client_key,
        }
    ):
        yield cluster.address


@contextmanager
def on_the_warm_worker(warm: Any, suite: Any = None, **settings: Any) -> Iterator[Any]:
    """A ``Grader`` of ``suite`` (default: the hidden suite), with ``settings`` changed (e.g. ``timeout``),
    on ``warm``'s sandbox worker: a worker of its own costs a start (bubblewrap, torch imported). The
    worker stays ``warm``'s; one started to replace a dead one is closed here."""
    from grader.api import Grader

    warm.start()
    grading = Grader(warm.settings.with_changes(**settings), mode=warm.mode, suite=suite)
    grading.worker = warm.worker
    try:
        yield grading
    finally:
        if grading.worker is not warm.worker:
            grading.close()
