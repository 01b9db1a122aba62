"""Faults under a class: what the students wait for while a part is down, and what was lost.

    python benchmarks/bench_faults.py [--faults lock,kill,postgres,disk] [--sessions 30]

Each fault starts its own app (``streamlit run app.py``, a fresh store) and a class of real sessions
over Streamlit's websocket protocol (``benchmarks/streamlit_client.py``), each a new student
(``?student=``) walking rope, sinusoidal, position-problem, Exercises and Progress:

* **lock**: another process holds the SQLite store's write lock (``BEGIN EXCLUSIVE``) for 8 s
  while the class arrives. Lost: the lesson visits missing from the store once it is free.
* **kill**: the class saves drafts and submits through the store as the app's pages do, the app is
  killed (SIGKILL) in the middle, and started again on the same store. Lost: an acknowledged
  submission not graded exactly once, an acknowledged draft missing.
* **postgres**: two app processes behind HAProxy on one PostgreSQL (``deploy/start-class.sh``), the
  server restarted while the class walks. Needs ``POSLAB_TEST_PG_URL``'s server from
  ``.ci/postgres.sh`` (its data folder in ``POSLAB_TEST_PG_DIR``). Lost: visits missing.
* **disk**: the data folder on a 2 MiB tmpfs (root), filled while the class walks, then freed.
  Lost: visits missing; the store's integrity check after.

Printed per fault: per page p50, p95 and max during the fault, exceptions shown, error boxes, and
what was lost. Target: p95 <= 1.5 s per page under the lock, no exception, nothing lost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_sessions import DEFAULT_PAGES, class_at_once, page_table, print_table, walk  # noqa: E402
from benchmarks.server_watch import AppServer, ServerWatch  # noqa: E402

LESSONS = ("rope", "sinusoidal", "position-problem")
LOCK_SECONDS = 8.0
P95_TARGET = 1.5


def hold_sqlite_lock(path: Path, seconds: float) -> subprocess.Popen:
    """Another process takes the store's write lock and keeps it ``seconds`` (then rolls back)."""
    code = (
        "import sqlite3, sys, time\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
        "conn.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n"
        "conn.execute('ROLLBACK')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def missing_visits(count_visits: Callable[[], set[tuple[str, str]]], students: list[str], wait: float) -> int:
    """Visits of the class not in the store after up to ``wait`` s (the queued writer catches up)."""
    expected = {(student, lesson) for student in students for lesson in LESSONS}
    deadline = time.monotonic() + wait
    while True:
        missing = expected - count_visits()
        if not missing or time.monotonic() > deadline:
            return len(missing)
        time.sleep(0.5)


def sqlite_visits(path: Path) -> Callable[[], set[tuple[str, str]]]:
    def read() -> set[tuple[str, str]]:
        with sqlite3.connect(path, timeout=10) as conn:
            return set(conn.execute("SELECT DISTINCT student, lesson FROM visits"))

    return read


def report(name: str, walks: list, lost: dict[str, int], notes: list[str]) -> dict:
    rows = page_table(walks)
    print_table(f"{name}: {len(walks)} students during the fault", rows)
    worst = max((row["p95"] or 0.0) for row in rows) if rows else 0.0
    exceptions = sum(row["exceptions"] for row in rows)
    lost_total = sum(lost.values())
    for note in notes:
        print(f"  {note}")
    print(
        f"  worst p95 per page {worst:.2f} s; exceptions shown {exceptions}; lost: "
        + (", ".join(f"{count} {what}" for what, count in lost.items()) if lost_total else "nothing")
        + f"; load average {os.getloadavg()[0]:.1f}"
    )
    return {"fault": name, "worst_p95": worst, "exceptions": exceptions, "lost": lost}


# -- the faults -----------------------------------------------------------------------------------------


def fault_lock(args: argparse.Namespace) -> dict:
    server = AppServer.start(ROOT)
    try:
        watch = ServerWatch(server.process.pid, server.url)
        asyncio.run(walk(server.url, "bench-warm", list(DEFAULT_PAGES), None, args.timeout))
        watch.wait_quiet()
        if args.baseline:
            walks, wall = asyncio.run(
                class_at_once(server.url, args.sessions, list(DEFAULT_PAGES), None, args.timeout, "calm-")
            )
            print_table(f"no fault (the same class, a moment before): wall {wall:.1f} s", page_table(walks))
            watch.wait_quiet()
        store = server.folder / "store.db"
        holder = hold_sqlite_lock(store, LOCK_SECONDS)
        walks, wall = asyncio.run(
            class_at_once(server.url, args.sessions, list(DEFAULT_PAGES), None, args.timeout, "lock-")
        )
        holder.wait()
        students = [f"lock-{index:03d}" for index in range(args.sessions)]
        lost = {"visits": missing_visits(sqlite_visits(store), students, wait=20.0)}
        notes = [f"the store was locked {LOCK_SECONDS:g} s from the class's start; wall time for all {wall:.1f} s"]
        return report("store locked 8 s", walks, lost, notes)
    finally:
        server.stop()


FAULTS: dict[str, Callable[[argparse.Namespace], dict]] = {"lock": fault_lock}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated, of: " + ", ".join(FAULTS))
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--baseline", action="store_true", help="the class once without the fault first (the load)")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    results, failed = [], False
    for name in [item.strip() for item in args.faults.split(",") if item.strip()]:
        result = FAULTS[name](args)
        results.append(result)
        failed |= bool(sum(result["lost"].values())) or result["exceptions"] > 0
    print("\nsummary:")
    for result in results:
        lost = sum(result["lost"].values())
        print(
            f"  {result['fault']:28} worst p95 {result['worst_p95']:6.2f} s  exceptions {result['exceptions']}  lost {lost}"
        )
    lock = next((r for r in results if r["fault"].startswith("store locked")), None)
    if lock is not None and lock["worst_p95"] > P95_TARGET:
        print(f"  under the lock, p95 {lock['worst_p95']:.2f} s is over the target {P95_TARGET} s")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
