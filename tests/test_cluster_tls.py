"""The grading cluster over Dask's TLS, as docs/scaling.md gives it, on loopback with self-signed certificates.

A private CA (openssl) signs one certificate each for the scheduler, the judge and the client
(the app or the CLI). The scheduler and a judge start with the ``--tls-*`` options and
``require-encryption``; ``python -m grader grade --scheduler tls://...`` grades a correct
submission through them with the client's certificate given in Dask's configuration
(``DASK_DISTRIBUTED__COMM__TLS__*``); a client without a certificate, and one speaking plain
TCP, are refused (those three clients are made in this process, each with its own Dask
configuration: a process apiece only added an import of distributed). Needs openssl.
"""

from __future__ import annotations

import csv
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from grader.mutants import reference_source
from tests.conftest import ROOT, require_system_part
from tests.test_listening_sockets import beyond_loopback, explain, listeners

ROLES = ("scheduler", "worker", "client")


def openssl(*arguments: str, folder: Path) -> None:
    subprocess.run(["openssl", *arguments], cwd=folder, check=True, capture_output=True)


def certificates(folder: Path) -> dict[str, tuple[Path, Path]]:
    """A CA, and for each role a key and a certificate it signed (valid for 127.0.0.1)."""
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=poslab test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        folder=folder,
    )
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    made = {}
    for role in ROLES:
        openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN=poslab {role}",
            "-keyout",
            f"{role}.key",
            "-out",
            f"{role}.csr",
            folder=folder,
        )
        openssl(
            "x509",
            "-req",
            "-in",
            f"{role}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.cnf",
            "-out",
            f"{role}.pem",
            folder=folder,
        )
        made[role] = (folder / f"{role}.pem", folder / f"{role}.key")
    return made


def tls_options(folder: Path, role: str) -> list[str]:
    return [
        "--tls-ca-file",
        str(folder / "ca.pem"),
        "--tls-cert",
        str(folder / f"{role}.pem"),
        "--tls-key",
        str(folder / f"{role}.key"),
    ]


def client_environment(folder: Path) -> dict[str, str]:
    """What the app or the CLI needs to reach a TLS cluster: Dask's own settings, nothing of ours."""
    return {
        "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(folder / "ca.pem"),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(folder / "client.pem"),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(folder / "client.key"),
    }


def scheduler_address(path: Path, process: subprocess.Popen, seconds: float = 120.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, "the scheduler exited"
        try:
            return json.loads(path.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.2)
    pytest.fail(f"the scheduler wrote no address within {seconds:g} s")


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory):
    require_system_part(shutil.which("openssl") is not None, "openssl is not installed (apt-get install openssl)")
    tmp_path = tmp_path_factory.mktemp("tls")
    certificates(tmp_path)
    env = os.environ | {
        "DASK_CONFIG": str(ROOT / "deploy" / "dask"),
        "PYTHONPATH": str(ROOT),
        "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        "POSLAB_GRADER_WARM_MODES": "hidden",
    }
    started = []

    def start(command: list[str], log: str) -> subprocess.Popen:
        with open(tmp_path / log, "wb") as output:
            started.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT))
        return started[-1]

    try:
        scheduler = start(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--protocol",
                "tls",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(tmp_path / "scheduler.json"),
                *tls_options(tmp_path, "scheduler"),
            ],
            "scheduler.log",
        )
        address = scheduler_address(tmp_path / "scheduler.json", scheduler)
        start(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--memory-limit",
                "0",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--dashboard-address",
                "127.0.0.1:0",
                "--preload",
                "grader.cluster",
                *tls_options(tmp_path, "worker"),
            ],
            "judge.log",
        )
        yield {"address": address, "folder": tmp_path, "processes": started}
    finally:
        for process in reversed(started):  # the judge first: it says goodbye to a scheduler still there
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_grading_on_a_tls_cluster_with_a_client_certificate(tls_cluster):
    address, folder = tls_cluster["address"], tls_cluster["folder"]
    assert address.startswith("tls://127.0.0.1:")
    submission = folder / "ada.py"
    submission.write_text(reference_source() + "\n")
    graded = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(submission),
            "--out",
            str(folder / "grades"),
            "--scheduler",
            address,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | client_environment(folder) | {"PYTHONPATH": str(ROOT)},
    )
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
    [row] = list(csv.DictReader((folder / "grades" / "gradebook.csv").open()))
    assert row["status"] == "graded" and float(row["total"]) == float(row["max"]) > 0, row

    for process in tls_cluster["processes"]:
        exposed = beyond_loopback(listeners(psutil.Process(process.pid)))
        assert not exposed, explain(exposed)


def _connect(address: str, config: dict[str, object]) -> str:
    """'connected', or why a Dask client with this configuration (and no other TLS setting) could not."""
    import dask
    from distributed import Client

    settings = {
        "distributed.comm.require-encryption": False,
        "distributed.comm.tls.ca-file": None,
        "distributed.comm.tls.client.cert": None,
        "distributed.comm.tls.client.key": None,
        **config,
    }

    def connect() -> str:
        with dask.config.set(settings):
            try:
                Client(address, timeout=10, set_as_default=False).close()
            except Exception as error:  # refused: TLS handshake, timeout, a plain connection reset
                outcome = f"refused: {error!r}"
            else:
                outcome = "connected"
        # A Client that failed to start is left to the cyclic garbage collector, and its __del__ stops
        # its event loop: run inside the next Client's start, that deadlocked on distributed's loop lock
        # (seen once, the test hung). Finalize it here, between the two.
        gc.collect()
        return outcome

    with ThreadPoolExecutor(1) as pool:  # the browser tests' Playwright may hold this thread's loop
        return pool.submit(connect).result()


def test_a_client_without_a_certificate_or_over_plain_tcp_is_refused(tls_cluster):
    address, folder = tls_cluster["address"], tls_cluster["folder"]
    with_certificate = _connect(
        address,
        {
            "distributed.comm.require-encryption": True,
            "distributed.comm.tls.ca-file": str(folder / "ca.pem"),
            "distributed.comm.tls.client.cert": str(folder / "client.pem"),
            "distributed.comm.tls.client.key": str(folder / "client.key"),
        },
    )
    assert with_certificate == "connected", with_certificate
    without = _connect(address, {"distributed.comm.tls.ca-file": str(folder / "ca.pem")})
    assert without != "connected"
    plain = _connect(address.replace("tls://", "tcp://"), {})
    assert plain != "connected"
