"""Faults: a locked store, a lost database connection, a full disk, a killed app (issue 39).

Each is cheap (a few seconds); the class-sized figures come from ``benchmarks/bench_faults.py``.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from app_pages.runtime.run_gate import RunGate
from app_pages.ui import store_calls
from grader.service.leases import LeaseKeeper, holder_name, stopped_holders
from poslab.store import Store, StoreBusyError, StoreError
from poslab.store.errors import StoreFullError, StoreInterruptedError, StoreUnavailableError
from poslab.store.limits import StoreLimits
from poslab.store.queued_writes import QueuedVisits
from tests.conftest import require_system_part
from tests.test_store_support import TEST_CATALOGUE, count_rows, fresh_postgres_schema, postgres_base_url

ROOT = Path(__file__).resolve().parent.parent


def sqlite_store(folder: Path, **options) -> tuple[Store, Path]:
    path = folder / "store.db"
    store = Store(f"sqlite:///{path}", catalogue=TEST_CATALOGUE, **options)
    store.record_visit("ann", "intro")  # the tables exist
    return store, path


def hold_write_lock(path: Path) -> sqlite3.Connection:
    """Another program's connection holding the store's write lock, as ``BEGIN EXCLUSIVE`` takes it."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


# -- the store locked --------------------------------------------------------------------------------


def test_under_a_held_lock_a_visit_returns_at_once_and_is_written_when_the_lock_goes(tmp_path):
    store, path = sqlite_store(tmp_path, lock_wait_seconds=0.3)
    holder = hold_write_lock(path)
    try:
        started = time.monotonic()
        for lesson in ("rope", "alibi", "rope"):  # the second rope is the same visit, queued once
            assert store.record_visit_soon("bob", lesson)
        assert time.monotonic() - started < 0.2
        progress = store.progress("bob")  # reads go on under the lock, and see the queued visits
        assert progress.lesson("rope").visited and progress.lesson("alibi").visited
        time.sleep(0.8)  # the writer tried and was refused: the visits wait in memory
        assert count_rows(store.url, "visits", "bob") == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.flush_queued_writes(10)
    assert count_rows(store.url, "visits", "bob") == 2


def test_a_write_the_student_asked_for_waits_no_longer_than_the_bound_and_says_so(tmp_path):
    store, path = sqlite_store(tmp_path, limits=StoreLimits(wait_seconds=0.5))
    holder = hold_write_lock(path)
    try:
        started = time.monotonic()
        with pytest.raises(StoreBusyError, match="busy: another program kept it locked"):
            store.complete_lesson("ann", "rope")
        assert 0.4 < time.monotonic() - started < 2.5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.complete_lesson("ann", "rope")  # and the store works once the lock is gone
    assert count_rows(store.url, "lesson_completions", "ann") == 1


def test_the_waits_are_configured_in_one_place_from_the_environment():
    limits = StoreLimits.from_env(
        {"POSLAB_STORE_WAIT": "2.5", "POSLAB_STORE_CONNECT": "1", "POSLAB_STORE_STATEMENT": ""}
    )
    assert limits == StoreLimits(wait_seconds=2.5, connect_seconds=1.0, statement_seconds=30.0)
    with pytest.raises(ValueError, match="POSLAB_STORE_WAIT must be a finite number of seconds greater than 0"):
        StoreLimits.from_env({"POSLAB_STORE_WAIT": "0"})


def test_a_page_run_that_waits_on_the_store_lets_other_students_pages_go(monkeypatch):
    gate, order = RunGate(1), []
    monkeypatch.setattr(store_calls, "page_runs", lambda: gate)
    waiting = threading.Event()

    def slow_call(_store):  # a store call held by a lock for a second
        waiting.set()
        time.sleep(1.0)
        order.append("slow call answered")
        return "saved"

    def waiting_run():
        with gate.slot():
            order.append("waiting run starts")
            assert store_calls.off_the_gate("save your draft", lambda: slow_call(None)) == "saved"
            order.append("waiting run ends")

    first = threading.Thread(target=waiting_run)
    first.start()
    assert waiting.wait(5)

    def other_run():
        with gate.slot():
            order.append("another student's page")

    other = threading.Thread(target=other_run)
    other.start()
    other.join(5)
    first.join(5)
    assert order == ["waiting run starts", "another student's page", "slow call answered", "waiting run ends"]


# -- the queue of visits -----------------------------------------------------------------------------


def test_queued_visits_are_kept_while_the_store_refuses_them_and_the_queue_is_bounded():
    written, refusing = [], threading.Event()
    refusing.set()

    def write(batch):
        if refusing.is_set():
            raise StoreBusyError(0.1)
        written.append(dict(batch))

    queue, now = QueuedVisits(write, max_queued=2), datetime.now(UTC)
    assert queue.add(("ann", "rope"), now) and queue.add(("ann", "rope"), now) and queue.add(("bob", "rope"), now)
    assert not queue.add(("cy", "rope"), now)  # full: dropped, said in the log
    assert not queue.flush(0.5) and queue.pending("ann") == ["rope"]
    refusing.clear()
    assert queue.flush(10)
    assert [set(batch) for batch in written] == [{("ann", "rope"), ("bob", "rope")}]


# -- the database server restarted --------------------------------------------------------------------


def test_a_server_that_does_not_answer_is_refused_within_the_bound_with_a_sentence():
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe closes
    url = f"postgresql+psycopg://nobody:secret@127.0.0.1:{port}/none"
    store = Store(url, catalogue=TEST_CATALOGUE, limits=StoreLimits(wait_seconds=1, connect_seconds=1))
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="could not be used") as raised:
        store.progress("ann")
    assert time.monotonic() - started < 6
    assert "secret" not in str(raised.value)


@pytest.fixture
def postgres_url():
    with fresh_postgres_schema(postgres_base_url()) as url:
        yield sa.make_url(url).update_query_dict({"application_name": "poslab-fault-test"}).render_as_string(False)


def drop_connections(admin_url: str) -> int:
    """What a server restart does to the store's connections: the server ends them."""
    admin = sa.create_engine(admin_url)
    try:
        with admin.begin() as conn:
            return len(
                conn.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE application_name = 'poslab-fault-test' AND pid <> pg_backend_pid()"
                    )
                ).all()
            )
    finally:
        admin.dispose()


def test_reads_and_writes_come_back_after_the_server_dropped_every_connection(postgres_url):
    store = Store(postgres_url, catalogue=TEST_CATALOGUE)
    store.record_visit("ann", "intro")
    assert drop_connections(postgres_base_url()) >= 1
    assert store.progress("ann").lesson("intro").visited  # the dead pooled connection is not used
    calls = []

    def insert_after_losing_the_connection(conn):
        calls.append(1)
        if len(calls) == 1:
            drop_connections(postgres_base_url())
        conn.execute(sa.text("INSERT INTO visits (student, at, lesson) VALUES ('bob', now(), 'rope')"))

    store._write(insert_after_losing_the_connection)
    assert len(calls) == 2  # retried once, on a new connection
    assert count_rows(store.url, "visits", "bob") == 1  # and written once


def test_a_connection_lost_at_the_commit_is_reported_never_retried_in_silence(postgres_url):
    store = Store(postgres_url, catalogue=TEST_CATALOGUE)
    store.record_visit("ann", "intro")
    calls = []

    def lose_the_connection_after_the_work(conn):
        calls.append(1)
        conn.execute(sa.text("INSERT INTO visits (student, at, lesson) VALUES ('bob', now(), 'rope')"))
        drop_connections(postgres_base_url())

    with pytest.raises(StoreInterruptedError, match="may not have been saved"):
        store._write(lose_the_connection_after_the_work)
    assert calls == [1]
    store.record_visit("cy", "rope")  # and the next call works


# -- a full disk ------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB file system (tmpfs, mounted here as root)."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], capture_output=True
        ).returncode
        == 0
    )
    require_system_part(mounted, "mounting a small tmpfs needs root and mount permission")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_said_in_a_sentence_corrupts_nothing_and_saving_works_again_once_freed(small_disk):
    store, path = sqlite_store(small_disk)
    store.save_draft("ann", "rope", "def rope(): ...\n", saved_by="tab-1")
    filler = fill(small_disk)
    with pytest.raises(StoreFullError, match="is full, so this change was not saved"):
        for number in range(200):  # each a new page of the database
            store.save_draft(f"student-{number}", "rope", "x = 1\n" * 4000, saved_by="tab-1")
    store.record_visit_soon("ann", "rope")  # queued: kept in memory meanwhile
    assert store.draft("ann", "rope").code == "def rope(): ...\n"  # reads go on
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    filler.unlink()
    store.save_draft("bob", "rope", "def rope(): return 1\n", saved_by="tab-2")
    assert store.draft("bob", "rope").code == "def rope(): return 1\n"
    assert store.flush_queued_writes(10)
    assert store.progress("ann").lesson("rope").visited


# -- the app killed -----------------------------------------------------------------------------------

# A replica as the pages use the store: hands in (a grading job) and saves drafts as the class types,
# and says so only once the store returned (what the page acknowledges).
KILLED_APP = """
import os, socket, sys
from poslab.store import Catalogue, Store
from poslab.vocabulary import GradingMode
store = Store(sys.argv[1], catalogue=Catalogue(lessons=(("intro", ()),), exercises=("rope",)))
holder = f"{socket.gethostname()[:60]}:{os.getpid()}:killed"  # as grader.service.leases.holder_name
for number in range(100_000):
    student = f"s{number % 30:02d}"
    if number < 30:
        store.add_grading_job(f"job-{number}", student, {"rope.py": "x = 1"}, ["rope"], GradingMode.HIDDEN, holder, 60)
        print("job", f"job-{number}", flush=True)
    saved = store.save_draft(student, "rope", f"# typed {number}", saved_by="tab")
    print("draft", student, saved.draft.revision, number, flush=True)
"""


def test_a_killed_app_loses_no_acknowledged_draft_and_its_jobs_are_graded_once_at_the_next_start(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url, catalogue=TEST_CATALOGUE).record_visit("ann", "intro")
    app = subprocess.Popen([sys.executable, "-c", KILLED_APP, url], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    jobs, drafts = [], {}
    assert app.stdout is not None
    for line in app.stdout:
        kind, *rest = line.split()
        if kind == "job":
            jobs.append(rest[0])
        else:
            drafts[rest[0]] = (int(rest[1]), int(rest[2]))
            if int(rest[2]) >= 45:  # every job handed in, and typing
                app.send_signal(signal.SIGKILL)
                break
    app.wait()
    store = Store(url, catalogue=TEST_CATALOGUE)
    for student, (revision, number) in drafts.items():
        draft = store.draft(student, "rope")
        assert draft.revision >= revision and int(draft.code.split()[-1]) >= number

    regraded = []  # the next start on this machine: its lease keeper claims them now, not in 60 s
    me = holder_name("restarted")
    assert stopped_holders(store.queued_job_holders(), me) == [
        holder_name("killed").replace(str(os.getpid()), str(app.pid))
    ]
    LeaseKeeper(store, me, 60, list, regraded.append, threading.Event()).claim_abandoned()
    assert sorted(record.id for record in regraded) == sorted(jobs) and len(jobs) == 30
    finished = [store.finish_grading_job(job, {"score": 1}, []) for job in jobs + jobs]
    assert finished == [True] * 30 + [False] * 30  # graded once, whoever finishes it twice


def test_a_store_call_that_answers_at_once_keeps_the_run_s_turn():
    gate, order = RunGate(1), []
    inside = threading.Event()

    def quick_run():
        with gate.slot():
            with gate.let_go_after(0.5):
                inside.set()
                time.sleep(0.05)  # a store call as it usually is
            time.sleep(0.1)
            order.append("first run ends")

    first = threading.Thread(target=quick_run)
    first.start()
    assert inside.wait(5)

    def other_run():
        with gate.slot():
            order.append("another student's page")

    other = threading.Thread(target=other_run)
    other.start()
    first.join(5)
    other.join(5)
    assert order == ["first run ends", "another student's page"]
