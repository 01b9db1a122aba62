"""How an embedded cluster's processes are set up: Dask's configuration, their environment, their cores.

One table (``CLUSTER_CONFIG``) by Dask's own keys: a process of the cluster gets it as environment
variables (``dask_environment``), the grade command's scheduler thread as ``dask.config``
(``grader.service.scheduler_thread``). ``judge_core`` pins a judge, and all it starts, to a core.
"""

from __future__ import annotations

import os

from poslab.config import PROJECT_ROOT

ALLOWED_FAILURES = 1  # a submission gets a second judge after the first died under it, not a third
HTTP_ADDRESS = "127.0.0.1:0"  # Dask's always-on HTTP server (--dashboard-address), kept on loopback
TICK_INTERVAL = "1s"  # Dask's event-loop check (distributed.admin.tick.interval), as deploy/dask/poslab.yaml


def judge_core(index: int, judges: int) -> list[str]:
    """``--cpu N`` for ``grader.service.launch`` when the judges fill the cores one each, else nothing
    (fewer judges, on cores fixed in advance, would pile onto the first cores of several clusters).

    A judge and its sandbox child wake each other several hundred times a grading, and a wake-up
    across cores costs more than one on the same core (on a 2-core VM, perf showed it in the
    kernel's locks): with the two on one core a grading took about 11 % less CPU, and ``grade
    --jobs 2`` of 40 copies 5 to 10 % less time. One core per judge keeps the judges apart."""
    cores = sorted(os.sched_getaffinity(0))
    return ["--cpu", str(cores[index])] if judges == len(cores) else []


# The cluster's Dask configuration, by Dask's own keys: each process gets it as its environment
# (``dask_environment``), a scheduler on a thread of this process as ``dask.config`` (``SchedulerThread``).
CLUSTER_CONFIG: dict[str, object] = {
    "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.daemon": False,
    # Dask starts an HTTP server in every scheduler and worker, dashboard or not (health, metrics,
    # call stacks, logs), on all interfaces by default. Nothing here uses them: no routes, and
    # each on a loopback port (HTTP_ADDRESS).
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
    # An idle cluster kept a tenth of a core busy (a scheduler and one judge: 2.4 s of CPU in 30 s):
    # Dask samples every worker thread's stack every 10 ms for its dashboard's profile (none here),
    # checks its event loop every 20 ms and reads the system's counters every 0.5 s. Without the
    # profile, with a tick a second and the counters every 5 s: 0.26 s in 30 s. Nothing here reads
    # them; a blocked event loop is still logged (after the tick's limit, 3 s).
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": TICK_INTERVAL,
    "distributed.admin.system-monitor.interval": "5s",
}


def dask_variable(key: str) -> str:
    """The environment variable Dask reads for a configuration key."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def dask_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
    env.update({dask_variable(key): str(value) for key, value in CLUSTER_CONFIG.items()})
    return env
