"""The CLI's scheduler on a thread of its own process (``grader.service.scheduler_thread``): configured and
logged as a scheduler process is, and gone when its cluster closes (TLS and loopback: test_private_files.py);
and the embedded cluster's folder, which goes with it unless its start failed."""

from __future__ import annotations

import shutil
import socket

import pytest

from grader.faults import GraderFault
from grader.service.embedded import EmbeddedCluster


def _scheduler_settings(dask_scheduler) -> tuple:
    return dask_scheduler.allowed_failures, dask_scheduler.WORKER_SATURATION, dask_scheduler.http_server.port > 0


@pytest.fixture
def started():
    cluster = EmbeddedCluster(1, scheduler_in_process=True)
    try:
        cluster.start_scheduler()
        yield cluster
    finally:
        cluster.close()


def test_a_scheduler_thread_has_the_clusters_settings(started):
    """As grader/README.md and the embedded cluster's docstring say: one failure allowed per task, one task a judge."""
    from distributed import Client

    with Client(started.address, timeout=30, security=started.security, set_as_default=False) as client:
        allowed_failures, saturation, _ = client.run_on_scheduler(_scheduler_settings)
    assert (allowed_failures, saturation) == (1, 1.0)


def test_a_scheduler_threads_log_goes_to_its_file(started):
    """Dask's log of the scheduler, as a process's (the grade command's terminal shows none of it:
    test_listening_sockets.py)."""
    from distributed import Client

    with Client(started.address, timeout=30, security=started.security, set_as_default=False) as client:
        client.run_on_scheduler(_scheduler_settings)  # Dask logs each such call on the scheduler
    started.scheduler_thread.close()  # (the cluster's close would remove the folder with its logs)
    log = (started.folder / "scheduler.log").read_text()
    assert "Scheduler at:" in log and "Run out-of-band function" in log


def test_a_closed_cluster_leaves_no_folder_behind(started):
    """Its key and logs go with it: every grade command left one in the system's temporary folder."""
    assert (started.folder / "tls" / "key.pem").exists()
    started.close()
    assert not started.folder.exists()


def test_closing_the_cluster_ends_the_scheduler_thread_and_its_port(started):
    host, port = started.address.removeprefix("tls://").rsplit(":", 1)
    thread = started.scheduler_thread
    assert thread.alive()
    started.close()
    assert not thread.alive()
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, int(port)), timeout=5):
        pass


def test_a_cluster_that_did_not_start_keeps_its_logs():
    """Its fault quotes the end of the scheduler's log; the whole log stays in the folder."""
    broken = EmbeddedCluster(1, {"PYTHONHOME": "/nonexistent"})  # no Python can start with it
    with pytest.raises(GraderFault, match="did not start"):
        broken.start()
    try:
        assert (broken.folder / "scheduler.log").exists()
    finally:
        shutil.rmtree(broken.folder, ignore_errors=True)


def test_a_cluster_closed_before_it_launched_starts_nothing_and_leaves_no_folder():
    """A close() that wins the race with launch() (the app stopping as it starts): no scheduler, no judge."""
    cluster = EmbeddedCluster(1)
    cluster.close()
    with pytest.raises(GraderFault, match="closed while it started"):
        cluster.launch()
    assert cluster.scheduler is None and cluster.judges == [None]
    assert not cluster.folder.exists()
