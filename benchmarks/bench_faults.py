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
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_sessions import DEFAULT_PAGES, class_at_once, page_table, percentile, print_table, walk  # noqa: E402
from benchmarks.server_watch import AppServer, ClassServer, ServerWatch  # noqa: E402
from benchmarks.streamlit_client import PageRun, ProtocolSession  # noqa: E402

LESSONS = ("rope", "sinusoidal", "position-problem")
LOCK_SECONDS = 8.0
P95_TARGET = 1.5
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")


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
        locked = time.perf_counter()
        walks, wall = asyncio.run(
            class_at_once(server.url, args.sessions, list(DEFAULT_PAGES), None, args.timeout, "lock-")
        )
        holder.wait()
        during = [run for runs in walks for run in runs if run.problem is None and run.ended <= locked + LOCK_SECONDS]
        students = [f"lock-{index:03d}" for index in range(args.sessions)]
        lost = {"visits": missing_visits(sqlite_visits(store), students, wait=20.0)}
        notes = [
            f"the store was locked {LOCK_SECONDS:g} s from the class's start; wall time for all {wall:.1f} s",
            f"page runs that ended while the store was locked: {len(during)}"
            + (f", p95 {percentile([run.seconds for run in during], 0.95):.2f} s" if during else ""),
        ]
        return report("store locked 8 s", walks, lost, notes)
    finally:
        server.stop()


# -- the app killed while the class types and hands in --------------------------------------------------

SUBMITTED = ("Starting the grader", "In the queue", "Grading your code", "Graded", "already have a submission")


async def type_and_hand_in(base_url: str, student: str, timeout: float, acks: dict) -> list[PageRun]:
    """Open Exercises, type (a draft), hand in, type again; each acknowledgement noted as the page gave it."""
    try:
        session, first = await ProtocolSession.open(base_url, student, "exercise", timeout)
    except Exception as error:  # noqa: BLE001 - the app was already down: nothing acknowledged
        return [PageRun("exercise", problem=f"could not connect: {type(error).__name__}")]
    runs = [first]
    try:
        for step, action in enumerate(("type", "hand in", "type")):
            if action == "type":
                code = f"# {student}, typed {step}\n"
                run = await session.send_component(
                    first, "code_editor", {"id": f"{student}-{step}", "type": "blur", "text": code}
                )
                if run.problem is None and any("Draft saved at" in text for text in run.texts):
                    acks.setdefault("drafts", {})[student] = step
            else:
                run = await session.click(first, "Submit for grading")
                if run.problem is None and any(phrase in text for text in run.texts for phrase in SUBMITTED):
                    acks.setdefault("submissions", set()).add(student)
            run.page = f"exercise ({action})"
            runs.append(run)
            if run.problem is not None:
                break
    finally:
        await session.close()
    return runs


def typed_step(code: str | None) -> int:
    """The step a stored draft was typed at (a later one than acknowledged may have been saved too)."""
    return int(code.split()[-1]) if code else -1


def graded_once(path: Path, students: set[str], wait: float) -> dict[str, int]:
    """Of the acknowledged submissions, after up to ``wait`` s: missing from the store, graded more than
    once, and still queued (recorded and held by the restarted app, its judges not done yet)."""
    deadline = time.monotonic() + wait
    while True:
        with sqlite3.connect(path, timeout=10) as conn:
            jobs = dict(conn.execute("SELECT student, status FROM grading_jobs"))
            counts = dict(
                conn.execute("SELECT student, count(*) FROM attempts WHERE kind = 'submission' GROUP BY student")
            )
        queued = sum(1 for student in students if jobs.get(student) == "queued")
        if not queued or time.monotonic() > deadline:
            return {
                "submissions missing": sum(1 for student in students if student not in jobs),
                "graded twice": sum(1 for student in students if counts.get(student, 0) > 1),
                "still queued": queued,
                "graded once": sum(1 for student in students if counts.get(student, 0) == 1),
            }
        time.sleep(1)


def fault_kill(args: argparse.Namespace) -> dict:
    server = AppServer.start(ROOT)
    folder, url = server.folder, server.url
    env = {"POSLAB_DATA_DIR": str(folder), "POSLAB_DB_URL": f"sqlite:///{folder / 'store.db'}"}
    try:
        ServerWatch(server.process.pid, url).wait_quiet()
        acks: dict = {}

        async def class_then_kill():
            students = [f"kill-{index:03d}" for index in range(args.sessions)]
            walks = [asyncio.create_task(type_and_hand_in(url, student, args.timeout, acks)) for student in students]
            while len(acks.get("submissions", ())) < args.sessions // 2 and not all(w.done() for w in walks):
                await asyncio.sleep(0.05)
            server.process.send_signal(signal.SIGKILL)  # the app only; its judges see it go and stop
            return await asyncio.gather(*walks)

        walks = asyncio.run(class_then_kill())
        server.process.wait()
        print(
            f"  killed with {len(acks.get('submissions', ()))} submissions and {len(acks.get('drafts', {}))} drafts acknowledged"
        )
        started = time.monotonic()
        server = AppServer.start(ROOT, env=env, port=int(url.rsplit(":", 1)[1]))
        restart = time.monotonic() - started
        submitted = acks.get("submissions", set())
        graded = graded_once(folder / "store.db", submitted, wait=args.grading_wait)
        with sqlite3.connect(folder / "store.db") as conn:
            stored = dict(conn.execute("SELECT student, code FROM drafts"))
        drafts_lost = sum(
            1 for student, step in acks.get("drafts", {}).items() if typed_step(stored.get(student)) < step
        )
        lost = {
            "submissions": graded["submissions missing"],
            "graded twice": graded["graded twice"],
            "drafts": drafts_lost,
        }
        notes = [
            f"app restarted in {restart:.1f} s; of {len(submitted)} acknowledged submissions, "
            f"{graded['graded once']} graded once, {graded['still queued']} still queued after "
            f"{args.grading_wait:g} s (recorded, claimed by the restarted app: its judges had not graded them yet)"
        ]
        return report("app SIGKILL and restart", walks, lost, notes)
    finally:
        server.stop()


# -- PostgreSQL restarted under two app processes --------------------------------------------------------


def restart_postgres(data_dir: Path) -> float:
    """``pg_ctl restart -m fast`` of the test server (``.ci/postgres.sh``'s folder); seconds it took."""
    started = time.monotonic()
    command = ["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", str(data_dir / "data"), "-m", "fast"]
    # Not captured: the server it starts keeps pg_ctl's output open, and a reader would wait forever.
    subprocess.run([*command, "-w", "restart"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def fault_postgres(args: argparse.Namespace) -> dict:
    base, pg_dir = os.environ.get("POSLAB_TEST_PG_URL", ""), os.environ.get("POSLAB_TEST_PG_DIR", "")
    if not base or not pg_dir:
        print('\nPostgreSQL restart: skipped (start one with: eval "$(bash .ci/postgres.sh)")')
        return {"fault": "PostgreSQL restart (skipped)", "worst_p95": 0.0, "exceptions": 0, "lost": {}}
    schema = f"faults_{os.getpid()}"
    admin = sa.create_engine(base, pool_pre_ping=True)  # its connection outlives the restart
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))  # a name of our own making, not input
    url = sa.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(False)
    server = ClassServer.start(ROOT, 2, url, judges=1)
    try:
        asyncio.run(walk(server.url, "bench-warm", list(DEFAULT_PAGES), None, args.timeout))

        async def class_and_restart():
            students = asyncio.create_task(
                class_at_once(server.url, args.sessions, list(DEFAULT_PAGES), None, args.timeout, "pg-")
            )
            await asyncio.sleep(2.0)
            took = await asyncio.to_thread(restart_postgres, Path(pg_dir))
            return await students, took

        (walks, wall), took = asyncio.run(class_and_restart())
        students = [f"pg-{index:03d}" for index in range(args.sessions)]
        engine = sa.create_engine(url)

        def visits() -> set[tuple[str, str]]:
            with engine.connect() as conn:
                return set(conn.execute(sa.text("SELECT DISTINCT student, lesson FROM visits")).all())

        lost = {"visits": missing_visits(visits, students, wait=20.0)}
        engine.dispose()
        notes = [f"PostgreSQL restarted 2 s into the class, in {took:.1f} s; wall time for all {wall:.1f} s"]
        return report("PostgreSQL restart", walks, lost, notes)
    finally:
        server.stop()
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


# -- the data folder full ---------------------------------------------------------------------------------


def fault_disk(args: argparse.Namespace) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="poslab-full-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        print(f"\ndisk full: skipped (mounting a tmpfs needs root: {mounted.stderr.decode().strip()})")
        return {"fault": "disk full (skipped)", "worst_p95": 0.0, "exceptions": 0, "lost": {}}
    store = folder / "store.db"
    server = None
    try:
        server = AppServer.start(ROOT, env={"POSLAB_DATA_DIR": str(folder), "POSLAB_DB_URL": f"sqlite:///{store}"})
        asyncio.run(walk(server.url, "bench-warm", list(DEFAULT_PAGES), None, args.timeout))
        ServerWatch(server.process.pid, server.url).wait_quiet()
        filler = folder / "filler"
        with open(filler, "wb") as out:
            try:
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
            except OSError:
                pass

        async def class_then_free():
            students = asyncio.create_task(
                class_at_once(server.url, args.sessions, list(DEFAULT_PAGES), None, args.timeout, "disk-")
            )
            await asyncio.sleep(LOCK_SECONDS)
            filler.unlink()
            return await students

        walks, wall = asyncio.run(class_then_free())
        students = [f"disk-{index:03d}" for index in range(args.sessions)]
        lost = {"visits": missing_visits(sqlite_visits(store), students, wait=20.0)}
        with sqlite3.connect(store) as conn:
            integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        lost["integrity problems"] = 0 if integrity == "ok" else 1
        notes = [
            f"the data folder full for {LOCK_SECONDS:g} s from the class's start, then freed; wall {wall:.1f} s; "
            f"store integrity after: {integrity}"
        ]
        return report("disk full", walks, lost, notes)
    finally:
        if server is not None:
            server.stop()
        subprocess.run(["umount", "-l", str(folder)], check=False)


FAULTS: dict[str, Callable[[argparse.Namespace], dict]] = {
    "lock": fault_lock,
    "kill": fault_kill,
    "postgres": fault_postgres,
    "disk": fault_disk,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated, of: " + ", ".join(FAULTS))
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--grading-wait", type=float, default=180.0, help="kill: seconds to wait for the regrading")
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
