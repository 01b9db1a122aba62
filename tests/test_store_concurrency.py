"""Nothing is lost under concurrency: 8 processes x 200 mixed writes against one database.

The processes start together on an empty database, so they also race to create the schema.
Rows are then counted with plain SQL, per student and per table, against each worker's plan.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback

from test_store_support import TEST_CATALOGUE, count_rows, store_url  # noqa: F401 (fixture)

from poslab.store import Store

PROCESSES = 8
WRITES = 200
# One write of each kind in turn; the table each kind lands in.
KINDS = ("visits", "lesson_completions", "check_answers", "hints", "attempts", "comments")


def _write_mixed(url: str, worker: int, start: multiprocessing.synchronize.Barrier) -> None:
    try:
        store = Store(url, catalogue=TEST_CATALOGUE, lock_wait_seconds=60)
        student = f"worker-{worker}"
        start.wait(timeout=120)
        for i in range(WRITES):
            kind = KINDS[i % len(KINDS)]
            if kind == "visits":
                store.record_visit(student, "rope")
            elif kind == "lesson_completions":
                store.complete_lesson(student, "intro")
            elif kind == "check_answers":
                store.record_check(student, "rope", "r1", i % 2 == 0)
            elif kind == "hints":
                store.record_hint(student, "alibi", 1 + i % 3)
            elif kind == "attempts":
                store.record_attempt(student, "rope", i % 7, 6 + i % 2, details={"i": i}, code=f"# {i}")
            else:
                store.add_comment(student, "alibi", f"comment {i} from {student}")
        store.close()
    except BaseException:
        traceback.print_exc()  # shown by pytest; the exit code tells the test
        raise SystemExit(1) from None


def expected_rows(kind: str) -> int:
    """How many of a worker's writes were of this kind, counted from its plan."""
    return sum(1 for i in range(WRITES) if KINDS[i % len(KINDS)] == kind)


def test_eight_processes_of_mixed_writes_lose_nothing(store_url):
    # fork: the workers open their own engines after forking (the parent has none open), and
    # spawning 8 fresh interpreters costs more than the writes on a 2-core machine.
    context = multiprocessing.get_context("fork")
    start = context.Barrier(PROCESSES + 1)  # the test joins in, to time the writes alone
    workers = [context.Process(target=_write_mixed, args=(store_url, n, start)) for n in range(PROCESSES)]
    for worker in workers:
        worker.start()
    start.wait(timeout=120)
    began = time.monotonic()
    for worker in workers:
        worker.join(timeout=300)
    elapsed = time.monotonic() - began
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES

    assert sum(expected_rows(kind) for kind in KINDS) == WRITES
    for kind in KINDS:
        assert count_rows(store_url, kind) == PROCESSES * expected_rows(kind), kind
        for n in range(PROCESSES):
            assert count_rows(store_url, kind, f"worker-{n}") == expected_rows(kind), (kind, n)

    # The same, through the store: every attempt and comment is readable.
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    assert len(store.attempt_details()) == PROCESSES * expected_rows("attempts")
    assert len(store.comments("alibi")) == PROCESSES * expected_rows("comments")
    assert len(store.class_progress()) == PROCESSES
    store.close()
    print(f"\n{PROCESSES} processes x {WRITES} writes = {PROCESSES * WRITES} rows in {elapsed:.1f} s")


def test_expected_rows_cover_every_kind():
    # Guards the plan above: with 200 writes every kind is written, none twice as often as another.
    counts = [expected_rows(kind) for kind in KINDS]
    assert min(counts) > 0 and max(counts) - min(counts) <= 1
