"""The app under a benchmark: start it on a free loopback port, and watch its process tree.

``AppServer.start`` runs ``streamlit run app.py`` in a temporary data folder with a fresh SQLite
store, as a student would start it (its grading service included), and ``stop`` ends it and
what it started. ``ServerWatch`` reads the resident memory and CPU of the Streamlit process
and of its whole tree (the grader's scheduler and judges) with psutil, and Streamlit's own
``/_stcore/metrics`` (active sessions, session events).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil

MIB = 1 << 20
QUIET_CPU_PERCENT = 30.0  # the whole tree, in percent of one core
QUIET_SECONDS = 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen | None, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the app exited with {process.returncode} before it answered")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"no answer from {url}/_stcore/health within {seconds:g} s")


@dataclass
class AppServer:
    process: subprocess.Popen
    url: str
    folder: Path

    @classmethod
    def start(
        cls, root: Path, options: list[str] = (), env: dict[str, str] | None = None, port: int | None = None
    ) -> AppServer:
        folder = Path(tempfile.mkdtemp(prefix="poslab-sessions-"))
        port = port or free_port()
        environment = (
            os.environ
            | {"POSLAB_DATA_DIR": str(folder), "POSLAB_DB_URL": f"sqlite:///{folder / 'store.db'}"}
            | (env or {})
        )
        command = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            *options,
        ]
        with open(folder / "app.log", "wb") as log:
            process = subprocess.Popen(
                command, cwd=root, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        server = cls(process, f"http://127.0.0.1:{port}", folder)
        try:
            wait_healthy(server.url, process)
        except RuntimeError:
            server.stop()
            raise
        return server

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join((self.folder / "app.log").read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM (Streamlit stops, the grading service closes its judges), then the group if needed."""
        stop_group(self.process, grace=20)


def stop_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM to a process that leads its own group; SIGKILL to the group if it is not gone in ``grace`` s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def proxied_apps(run_dir: Path) -> set[str]:
    """The app processes HAProxy's health checks found up (``show stat`` on its stats socket)."""
    with socket.socket(socket.AF_UNIX) as stats:
        stats.connect(str(run_dir / "haproxy.sock"))
        stats.sendall(b"show stat\n")
        answer = b"".join(iter(lambda: stats.recv(65536), b"")).decode()
    rows = [line.split(",") for line in answer.splitlines() if line.startswith("apps,")]
    return {row[1] for row in rows if row[1].startswith("app") and row[17] == "UP"}  # svname, status


@dataclass
class ClassServer:
    """``deploy/start-class.sh``: app processes behind HAProxy, one PostgreSQL store, one grading cluster."""

    process: subprocess.Popen
    url: str
    apps: dict[str, str]  # app1 -> its own loopback URL
    folder: Path
    public_port: int
    db_url: str

    @classmethod
    def start(
        cls, root: Path, processes: int, db_url: str, judges: int | None = None, folder: Path | None = None
    ) -> ClassServer:
        folder = folder or Path(tempfile.mkdtemp(prefix="poslab-class-"))
        public, *app_ports, scheduler = [free_port() for _ in range(processes + 2)]
        env = os.environ | {
            "POSLAB_DB_URL": db_url,
            "POSLAB_PUBLIC_ADDRESS": f"127.0.0.1:{public}",
            "POSLAB_APP_PORTS": " ".join(map(str, app_ports)),
            "POSLAB_SCHEDULER_PORT": str(scheduler),
            "POSLAB_RUN_DIR": str(folder / "run"),
            "PYTHON": sys.executable,
        }
        if judges:
            env["POSLAB_GRADER_WORKERS"] = str(judges)
        with open(folder / "start-class.log", "wb") as log:
            process = subprocess.Popen(
                # Plain HTTP: these clients speak to it on loopback (HTTPS is the script's default).
                ["bash", str(root / "deploy" / "start-class.sh"), "--http"],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        apps = {f"app{index}": f"http://127.0.0.1:{port}" for index, port in enumerate(app_ports, start=1)}
        server = cls(process, f"http://127.0.0.1:{public}", apps, folder, public, db_url)
        try:
            for url in [*apps.values(), server.url]:
                wait_healthy(url, process, seconds=240)
            server.wait_until_proxied()
        except BaseException:
            server.stop()
            raise
        return server

    def wait_until_proxied(self, seconds: float = 120.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if proxied_apps(self.folder / "run") >= set(self.apps):
                return
            time.sleep(0.5)
        raise RuntimeError(f"HAProxy did not find {sorted(self.apps)} up within {seconds:g} s")

    def stop(self) -> None:
        """SIGTERM: the script stops everything it started (killing what hangs), else its group is killed."""
        stop_group(self.process, grace=60)


def metrics(base_url: str) -> dict[str, float]:
    """Streamlit's own counters: active sessions and session events (connect, disconnect, ...)."""
    url = f"{base_url}/_stcore/metrics?families=active_sessions&families=session_events"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        name = name.replace('session_events_total{type="', "sessions_").replace('"}', "")
        found[name] = float(value)
    return found


class ServerWatch:
    """Memory and CPU of the Streamlit process (or of every app process under a launcher such as
    deploy/start-class.sh: its pid) and of the whole tree; no figures without a pid."""

    def __init__(self, pid: int | None, base_url: str) -> None:
        self.process = psutil.Process(pid) if pid else None
        self.base_url = base_url
        self._known: dict[int, psutil.Process] = {}
        self._samples: list[dict] = []
        self._sampling = threading.Event()
        self._thread: threading.Thread | None = None

    def tree(self) -> list[psutil.Process]:
        try:
            found = [self.process, *self.process.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        # The same Process objects each time: cpu_times() deltas need them.
        for process in found:
            self._known.setdefault(process.pid, process)
        return [self._known[process.pid] for process in found]

    def is_app(self, process: psutil.Process) -> bool:
        """A Streamlit process: the root, or each app process under a launcher (deploy/start-class.sh)."""
        if process.pid == self.process.pid and "streamlit" in " ".join(self._command(process)):
            return True
        command = self._command(process)
        return "streamlit" in " ".join(command[:3]) and "run" in command

    @staticmethod
    def _command(process: psutil.Process) -> list[str]:
        try:
            return process.cmdline()
        except psutil.Error:
            return []

    def _cpu_seconds(self) -> tuple[float, float]:
        app = tree = 0.0
        for process in self.tree():
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            used = times.user + times.system
            tree += used
            if self.is_app(process):
                app += used
        return app, tree

    def cpu_seconds(self) -> float:
        """User and system CPU seconds of the Streamlit process(es) so far (0 without a pid)."""
        return 0.0 if self.process is None else self._cpu_seconds()[0]

    def _rss(self) -> tuple[float, float, int]:
        app = tree = 0.0
        processes = self.tree()
        for process in processes:
            try:
                rss = process.memory_info().rss / MIB
            except psutil.Error:
                continue
            tree += rss
            if self.is_app(process):
                app += rss
        return app, tree, len(processes)

    def snapshot(self, label: str) -> dict:
        found = {"label": label, "load_average": os.getloadavg()[0], **metrics(self.base_url)}
        if self.process is None:
            return found
        app_cpu0, tree_cpu0 = self._cpu_seconds()
        time.sleep(1.0)
        app_cpu1, tree_cpu1 = self._cpu_seconds()
        app_rss, tree_rss, count = self._rss()
        return found | {
            "app_rss_mib": app_rss,
            "tree_rss_mib": tree_rss,
            "processes": count,
            "app_cpu_percent": 100 * (app_cpu1 - app_cpu0),
            "tree_cpu_percent": 100 * (tree_cpu1 - tree_cpu0),
        }

    def wait_quiet(self, limit: float = 180.0) -> float:
        """Seconds until the tree used less than QUIET_CPU_PERCENT of a core for QUIET_SECONDS."""
        start = time.monotonic()
        quiet, (_, last) = 0, self._cpu_seconds()
        while quiet < QUIET_SECONDS and time.monotonic() - start < limit:
            time.sleep(1.0)
            _, now = self._cpu_seconds()
            quiet = quiet + 1 if 100 * (now - last) < QUIET_CPU_PERCENT else 0
            last = now
        return time.monotonic() - start

    def start_sampling(self, every: float = 0.5) -> None:
        if self.process is None:
            return
        self._samples = []
        self._sampling.set()

        def sample() -> None:
            last_time, (last_app, last_tree) = time.monotonic(), self._cpu_seconds()
            while self._sampling.is_set():
                time.sleep(every)
                now, (app_cpu, tree_cpu) = time.monotonic(), self._cpu_seconds()
                app_rss, tree_rss, _ = self._rss()
                elapsed = max(now - last_time, 1e-6)
                self._samples.append(
                    {
                        "app_rss_mib": app_rss,
                        "tree_rss_mib": tree_rss,
                        "app_cpu_percent": 100 * (app_cpu - last_app) / elapsed,
                        "tree_cpu_percent": 100 * (tree_cpu - last_tree) / elapsed,
                        "active_sessions": metrics(self.base_url).get("active_sessions"),
                    }
                )
                last_time, last_app, last_tree = now, app_cpu, tree_cpu

        self._thread = threading.Thread(target=sample, name="server-watch", daemon=True)
        self._thread.start()

    def stop_sampling(self) -> dict:
        if self.process is None or self._thread is None:
            return {}
        self._sampling.clear()
        self._thread.join()
        samples = self._samples or [{}]

        def column(key: str) -> list[float]:
            return [sample[key] for sample in samples if sample.get(key) is not None]

        return {
            "label": "during",
            "samples": len(self._samples),
            "app_rss_mib": max(column("app_rss_mib"), default=0.0),
            "tree_rss_mib": max(column("tree_rss_mib"), default=0.0),
            "app_cpu_percent": sum(column("app_cpu_percent")) / max(1, len(column("app_cpu_percent"))),
            "tree_cpu_percent": sum(column("tree_cpu_percent")) / max(1, len(column("tree_cpu_percent"))),
            "active_sessions": max(column("active_sessions"), default=None),
        }

    def print_resources(self, before: dict, during: dict, after: dict) -> None:
        if self.process is None:
            print("\n  server figures: none (give --server-pid with --url)")
            return
        print("\n  server (Streamlit process / whole tree with the grader; during: peak memory, mean CPU)")
        print(
            f"  {'':8} {'app RSS MiB':>11} {'tree RSS MiB':>12} {'app CPU %':>9} {'tree CPU %':>10} "
            f"{'sessions':>8} {'load avg':>8}"
        )
        for row in (before, during, after):
            sessions = row.get("active_sessions")
            print(
                f"  {row['label']:8} {row.get('app_rss_mib', 0):11.0f} {row.get('tree_rss_mib', 0):12.0f} "
                f"{row.get('app_cpu_percent', 0):9.0f} {row.get('tree_cpu_percent', 0):10.0f} "
                f"{'-' if sessions is None else int(sessions):>8} {row.get('load_average', os.getloadavg()[0]):8.2f}"
            )

    @staticmethod
    def machine_note() -> str:
        load = os.getloadavg()[0]
        note = "a loaded machine" if load > 0.5 * (os.cpu_count() or 1) else "a quiet machine"
        return f"{os.cpu_count()} cores, load average {load:.2f} at the start ({note})"
