"""Nothing the app or the grader starts listens beyond loopback, except Streamlit's own port.

Every listening socket (TCP) and bound socket (UDP) of a process tree is read with psutil while it
runs. A scheduler, judge or HTTP server on 0.0.0.0 (Dask's default for a judge's HTTP server)
fails with the process and address. Here ``python -m grader grade`` grades a submission, and the
checker itself is shown to fail on a child that listens on all interfaces. The app's side (as a
student starts it: ``streamlit run app.py``, whose grading service starts with the server, before
any page is opened) is checked on the app the OIDC test runs (``tests/browser/test_oidc_login.py``),
which starts its judges that way: a second app with judges of its own cost the suite 15 s of CPU.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT

JUDGES = 1  # one judge shows a judge's sockets; each costs a torch start-up in the suite
# What is graded does not matter here, only that a judge starts and grades: one short exercise.
SUBMISSION = "def apply_rope(x, positions=None, base=10000.0):\n    return x\n"


@dataclass(frozen=True)
class Listener:
    pid: int
    command: str
    address: str
    port: int

    def __str__(self) -> str:
        return f"{self.address}:{self.port} (pid {self.pid}: {self.command[:160]})"


def listeners(root: psutil.Process) -> set[Listener]:
    """Every TCP socket listening and UDP socket bound in ``root``'s process tree, now."""
    found = set()
    try:
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return found
    for process in tree:
        try:
            sockets = process.net_connections(kind="inet")
            command = " ".join(process.cmdline()).strip()  # Dask pads its retitled processes
        except psutil.Error:
            continue
        for sock in sockets:
            is_udp = sock.type == 2  # socket.SOCK_DGRAM
            if sock.laddr and (sock.status == psutil.CONN_LISTEN or (is_udp and not sock.raddr)):
                found.add(Listener(process.pid, command, sock.laddr.ip, sock.laddr.port))
    return found


def grader_role(command: str) -> str | None:
    """ "scheduler" or "judge" for the grading service's processes (Dask retitles them), else None."""
    for role, marks in (
        ("judge", ("dask worker", "grader.service.launch worker")),
        # the grade command runs its scheduler on a thread of its own (grader.service.scheduler_thread)
        ("scheduler", ("dask scheduler", "grader.service.launch scheduler", "-m grader grade")),
    ):
        if any(mark in command for mark in marks):
            return role
    return None


def serving_process(port: int) -> psutil.Process:
    """The process listening on this loopback port (an app started by a fixture that keeps its handle)."""
    for sock in psutil.net_connections(kind="tcp"):
        if sock.status == psutil.CONN_LISTEN and sock.laddr and sock.laddr.port == port and sock.pid:
            return psutil.Process(sock.pid)
    raise AssertionError(f"nothing listens on port {port}")


def beyond_loopback(found: set[Listener], allowed_port: int | None = None) -> list[Listener]:
    return sorted(
        (
            item
            for item in found
            if not ipaddress.ip_address(item.address.split("%")[0]).is_loopback and item.port != allowed_port
        ),
        key=str,
    )


def explain(exposed: list[Listener]) -> str:
    return "listening beyond loopback:\n  " + "\n  ".join(map(str, exposed))


def wait_for_judges(root: psutil.Process, seconds: float = 240.0) -> set[Listener]:
    """Sockets once every judge listens (they join the scheduler once warm), and 2 s after."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = listeners(root)
        judges = {item.pid for item in found if grader_role(item.command) == "judge"}
        if len(judges) >= JUDGES:
            time.sleep(2.0)
            return found | listeners(root)
        time.sleep(0.5)
    pytest.fail(
        f"the grading service's {JUDGES} judges did not listen within {seconds:g} s; seen: "
        + ", ".join(map(str, listeners(root)))
    )


def test_grading_from_the_command_line_listens_on_loopback_only(tmp_path: Path):
    submission = tmp_path / "ada.py"
    submission.write_text(SUBMISSION)
    command = [
        sys.executable,
        "-m",
        "grader",
        "grade",
        str(submission),
        "--out",
        str(tmp_path / "grades"),
        "--jobs",
        str(JUDGES),
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ | {"PYTHONPATH": str(ROOT)}
    )
    root, seen = psutil.Process(process.pid), set()
    try:
        while process.poll() is None:  # the whole run, judges' start-up and grading included
            seen |= listeners(root)
            time.sleep(0.2)
    finally:
        if process.poll() is None:
            process.kill()
    output = process.stdout.read().decode(errors="replace")
    assert process.returncode == 0, output[-2000:]
    assert "distributed." not in output, "Dask's log reached the terminal:\n" + output[-2000:]
    assert {grader_role(item.command) for item in seen} >= {"scheduler", "judge"}, (
        "the scheduler's and a judge's sockets were never seen: " + ", ".join(map(str, seen))
    )
    exposed = beyond_loopback(seen)
    assert not exposed, explain(exposed)


def test_the_check_fails_on_a_child_listening_on_all_interfaces():
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, time\ns = socket.socket()\n"
            "s.bind(('0.0.0.0', 0)); s.listen(); print(s.getsockname()[1], flush=True)\n"
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(child.stdout.readline())
        exposed = beyond_loopback(listeners(psutil.Process(child.pid)))
        assert [(item.pid, item.address, item.port) for item in exposed] == [(child.pid, "0.0.0.0", port)]
        assert "0.0.0.0:" in explain(exposed)
    finally:
        child.kill()
        child.wait()
