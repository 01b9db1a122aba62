"""The progress store's behaviour, on SQLite and on PostgreSQL (see ``test_store_support``).

Expected values are worked out by hand from what each test wrote, not from the store's code.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from test_store_support import TEST_CATALOGUE, count_rows, store, store_at_revision, store_url  # noqa: F401 (fixtures)

from poslab.lessons import all_lessons
from poslab.store import (
    SchemaVersionError,
    Store,
    StoreBusyError,
    StoreUnavailableError,
    StudentProgress,
    TestRow,
)
from poslab.store.limits import StoreLimits

# -- schema ---------------------------------------------------------------------------------------


def test_schema_is_created_on_first_use_and_its_revision_recorded(store_url):
    from poslab.store import revisions

    first = Store(store_url, catalogue=TEST_CATALOGUE)
    first.record_visit("ann", "intro")
    assert first.schema_revision == revisions.head() == "0008"
    first.close()
    # A second store (another process, another replica) finds the schema and keeps the row.
    second = Store(store_url, catalogue=TEST_CATALOGUE)
    assert second.schema_revision == "0008"
    assert second.progress("ann").lesson("intro").visited
    second.close()


# -- lessons and quick checks ---------------------------------------------------------------------


def test_a_visit_marks_only_that_lesson_visited(store):
    store.record_visit("ann", "rope")
    lessons = {lesson.lesson: lesson for lesson in store.progress("ann").lessons}
    assert [lesson.lesson for lesson in store.progress("ann").lessons] == ["intro", "rope", "alibi"]
    assert lessons["rope"].visited and not lessons["rope"].done
    assert not lessons["intro"].visited and not lessons["alibi"].visited


def test_a_lesson_without_checks_is_done_only_when_marked(store):
    store.record_visit("ann", "intro")
    assert not store.progress("ann").lesson("intro").done
    store.complete_lesson("ann", "intro")
    intro = store.progress("ann").lesson("intro")
    assert intro.done and intro.marked_done and intro.checks_total == 0


def test_a_lesson_is_done_when_each_check_was_answered_right_at_some_point(store):
    store.record_check("ann", "rope", "r1", False)
    store.record_check("ann", "rope", "r1", True)
    store.record_check("ann", "rope", "r1", False)  # a later wrong answer does not undo the right one
    rope = store.progress("ann").lesson("rope")
    assert rope.checks_right == ("r1",) and rope.checks_total == 2 and not rope.done
    store.record_check("ann", "rope", "r2", True)
    rope = store.progress("ann").lesson("rope")
    assert rope.checks_right == ("r1", "r2") and rope.done and not rope.marked_done


def test_marking_a_lesson_done_counts_without_its_checks(store):
    store.complete_lesson("ann", "alibi")
    alibi = store.progress("ann").lesson("alibi")
    assert alibi.done and alibi.checks_right == ()


def test_every_check_answer_is_kept(store, store_url):
    for correct in (False, True, True, False):
        store.record_check("ann", "alibi", "a1", correct)
    assert count_rows(store_url, "check_answers", "ann") == 4


def test_each_student_sees_only_their_own_progress(store):
    store.record_check("ann", "alibi", "a1", True)
    assert store.progress("ann").lesson("alibi").done
    assert not store.progress("bob").lesson("alibi").done


def test_the_default_catalogue_follows_poslab_lessons(tmp_path):
    # Whatever the quick checks are today: answering each right finishes exactly the lessons
    # that have checks; the others need marking.
    store = Store(f"sqlite:///{tmp_path / 'course.db'}")
    for lesson in all_lessons():
        for check_id in lesson.check_ids:
            store.record_check("ann", lesson.id, check_id, True)
    done = {item.lesson: item.done for item in store.progress("ann").lessons}
    assert done == {lesson.id: bool(lesson.check_ids) for lesson in all_lessons()}
    lesson = all_lessons()[0]
    with pytest.raises(ValueError, match="unknown quick check"):
        store.record_check("ann", lesson.id, "no-such-check", True)
    store.close()


# -- exercises: attempts, hints, grades ----------------------------------------------------------


def test_best_score_is_from_the_hidden_suite_and_public_scores_are_kept_apart(store):
    store.record_attempt("ann", "rope", 2, 10)
    store.record_attempt("ann", "rope", 9, 10, public_tests_only=True)
    store.record_attempt("ann", "rope", 6, 10)
    store.record_attempt("ann", "rope", 4, 10)
    rope = store.progress("ann").exercise("rope")
    assert (rope.attempts, rope.graded_attempts) == (4, 3)
    assert (rope.best_score, rope.max_score) == (6.0, 10.0)
    assert (rope.best_public_score, rope.public_max_score) == (9.0, 10.0)


def test_public_tests_only_attempts_are_never_a_grade(store):
    store.record_attempt("ann", "alibi", 5, 5, public_tests_only=True)
    alibi = store.progress("ann").exercise("alibi")
    assert alibi.best_score is None and alibi.max_score is None and alibi.best_public_score == 5.0
    assert store.progress("ann").percent == 0.0


def test_best_score_is_the_best_fraction_when_maxima_differ(store):
    store.record_attempt("ann", "rope", 6, 10)  # 60 %
    store.record_attempt("ann", "rope", 3, 4)  # 75 %
    rope = store.progress("ann").exercise("rope")
    assert (rope.best_score, rope.max_score) == (3.0, 4.0)


def test_hints_used_counts_distinct_tiers(store, store_url):
    for tier in (1, 1, 2):
        store.record_hint("ann", "rope", tier)
    assert store.progress("ann").exercise("rope").hints_used == 2
    assert store.progress("ann").exercise("alibi").hints_used == 0
    assert count_rows(store_url, "hints", "ann") == 3


def test_overall_percentage_counts_lessons_and_grades_equally(store):
    # 3 lessons + 2 exercises = 5 items: one lesson done (1) + rope at 50 % (0.5) -> 1.5 / 5 = 30 %.
    store.complete_lesson("ann", "intro")
    store.record_attempt("ann", "rope", 5, 10)
    assert store.progress("ann").percent == pytest.approx(30.0)


def test_an_attempt_keeps_details_and_code(store):
    details = {"tests": [{"name": "shape", "passed": True}], "max_error": 1.5e-7, "note": "ünïcode"}
    code = "def apply_rope(x):\n    return x  # 'quotes' and \"more\"\n"
    attempt_id = store.record_attempt("ann", "rope", 1, 2, details=details, code=code)
    (attempt,) = store.attempt_details("ann", "rope")
    assert attempt.id == attempt_id
    assert attempt.details == details and attempt.code == code
    assert (attempt.score, attempt.max_score, attempt.public_tests_only) == (1.0, 2.0, False)


def test_attempts_are_a_time_series_for_one_student(store):
    store.record_attempt("ann", "rope", 1, 4)
    store.record_attempt("bob", "rope", 4, 4)
    store.record_attempt("ann", "alibi", 2, 4, public_tests_only=True)
    store.record_attempt("ann", "rope", 3, 4)
    table = store.attempts("ann")
    assert list(table["exercise"]) == ["rope", "alibi", "rope"]
    assert list(table["fraction"]) == [0.25, 0.5, 0.75]
    assert list(table["public_tests_only"]) == [False, True, False]
    assert table["time"].is_monotonic_increasing and str(table["time"].dt.tz) == "UTC"
    assert list(store.attempts("ann", "rope")["score"]) == [1.0, 3.0]
    assert store.attempts("carol").empty


def test_per_test_pass_rates_come_from_the_rows_given_with_each_attempt(store):
    def rows(*outcomes, exercise="rope"):
        return [TestRow(exercise, name, ok) for name, ok in outcomes]

    store.record_attempt("ann", "rope", 1, 2, tests=rows(("shape", True), ("norm", False)))
    store.record_attempt("bob", "rope", 2, 2, tests=rows(("shape", True), ("norm", True)))
    store.record_attempt("bob", "rope", 0, 2, tests=rows(("shape", False), ("norm", False)))
    store.record_attempt("ann", "alibi", 1, 1, tests=rows(("slopes", True), exercise="alibi"))
    store.record_attempt("ann", "rope", 2, 2, tests=rows(("shape", False)), public_tests_only=True)
    store.record_attempt("ann", "rope", 2, 2, details={"tests": [{"name": "shape", "passed": False}]})  # not read
    table = store.per_test_pass_rates()
    rates = {(row.exercise, row.test): (row.pass_rate, row.n) for row in table.itertuples()}
    assert rates == {("rope", "norm"): (1 / 3, 3), ("rope", "shape"): (2 / 3, 3), ("alibi", "slopes"): (1.0, 1)}
    assert list(table["test"]) == ["norm", "shape", "slopes"]  # most failed first
    public = store.per_test_pass_rates("rope", public_tests_only=True)
    assert public.to_dict("records") == [{"exercise": "rope", "test": "shape", "pass_rate": 0.0, "n": 1}]
    assert list(store.per_test_pass_rates("alibi")["test"]) == ["slopes"]


def test_test_rows_of_another_exercise_or_without_a_name_are_refused(store):
    with pytest.raises(ValueError, match="exercise 'alibi' was given with an attempt at 'rope'"):
        store.record_attempt("ann", "rope", 1, 2, tests=[TestRow("alibi", "slopes", True)])
    with pytest.raises(ValueError, match="test name"):
        store.record_attempt("ann", "rope", 1, 2, tests=[TestRow("rope", "", True)])
    with pytest.raises(ValueError, match="passed must be True or False"):
        store.record_attempt("ann", "rope", 1, 2, tests=[TestRow("rope", "norm", 1)])
    assert store.attempts("ann").empty  # nothing half-written


def test_attempts_stored_before_test_rows_existed_keep_counting_in_pass_rates(store_url):
    import sqlalchemy as sa

    attempts = store_at_revision(store_url, "0002").tables["attempts"]  # before per-test rows
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        for details in (
            {"tests": [{"name": "norm", "status": "passed"}, {"name": "shape", "status": "failed"}]},
            {"tests": [{"name": "norm", "passed": False}, {"oops": 1}]},
            {"unexpected": "shape"},
        ):
            conn.execute(
                sa.insert(attempts).values(
                    student="ann",
                    exercise="rope",
                    score=1,
                    max_score=2,
                    public_tests_only=False,
                    details=json.dumps(details),
                    at=datetime(2026, 1, 2, tzinfo=UTC),
                )
            )
    engine.dispose()
    rates = Store(store_url, catalogue=TEST_CATALOGUE).per_test_pass_rates()
    assert {(row.test, row.pass_rate, row.n) for row in rates.itertuples()} == {("norm", 0.5, 2), ("shape", 0.0, 1)}


# -- the class view -------------------------------------------------------------------------------


def test_class_progress_has_one_row_per_student(store):
    store.record_visit("bob", "intro")
    store.complete_lesson("ann", "intro")
    store.record_check("ann", "alibi", "a1", True)
    store.record_attempt("ann", "rope", 3, 4)
    store.record_hint("ann", "alibi", 1)
    store.add_comment("carol", "rope", "Why does the angle depend on the index?")
    table = store.class_progress()
    assert list(table["student"]) == ["ann", "bob", "carol"]
    ann = table.set_index("student").loc["ann"]
    assert ann["lessons_done"] == 2 and ann["lessons_total"] == 3
    # (2 lessons + 0.75 of rope) / 5 items
    assert ann["percent"] == pytest.approx(100 * 2.75 / 5)
    assert ann["grade:rope"] == 0.75 and math.isnan(ann["grade:alibi"])
    assert (ann["exercises_attempted"], ann["exercises_graded"], ann["hints_used"]) == (1, 1, 1)
    bob = table.set_index("student").loc["bob"]
    assert (bob["lessons_visited"], bob["lessons_done"], bob["percent"]) == (1, 0, 0.0)
    assert str(table["last_active"].dt.tz) == "UTC"
    assert store.students() == ("ann", "bob", "carol")


def test_class_progress_of_an_empty_store_is_an_empty_table(store):
    table = store.class_progress()
    assert table.empty and "student" in table.columns and "grade:rope" in table.columns


# -- comments -------------------------------------------------------------------------------------


def test_comments_newest_first_with_ids_and_delete(store):
    first = store.add_comment("ann", "rope", "  first  ")
    second = store.add_comment("bob", "rope", "second")
    store.add_comment("ann", "intro", "elsewhere")
    listed = store.comments("rope")
    assert [(c.id, c.student, c.text) for c in listed] == [(second, "bob", "second"), (first, "ann", "first")]
    assert first != second
    store.delete_comment(first)
    assert [c.id for c in store.comments("rope")] == [second]
    with pytest.raises(KeyError, match=str(first)):
        store.delete_comment(first)
    with pytest.raises(KeyError):
        store.delete_comment(10_000_000)


def test_comment_length_limits(store):
    store.add_comment("ann", "rope", "x" * 2000)
    for bad in ("", "   \n ", "x" * 2001):
        with pytest.raises(ValueError, match="1 to 2,000 characters"):
            store.add_comment("ann", "rope", bad)
    assert [len(c.text) for c in store.comments("rope")] == [2000]


# -- times ----------------------------------------------------------------------------------------


def test_times_are_timezone_aware_utc(store):
    before = datetime.now(UTC)
    store.add_comment("ann", "rope", "now")
    store.record_attempt("ann", "rope", 1, 1)
    after = datetime.now(UTC)
    (comment,) = store.comments("rope")
    (attempt,) = store.attempt_details("ann")
    for moment in (comment.time, attempt.time, store.progress("ann").last_active):
        assert moment.utcoffset() == timedelta(0)
        assert before <= moment <= after


# -- bad input ------------------------------------------------------------------------------------


def test_names_are_trimmed_and_limited_to_64_characters(store, store_url):
    store.record_visit("  ann  ", "intro")
    assert store.progress("ann").lesson("intro").visited
    store.record_visit("n" * 64, "intro")
    for bad in ("", "   ", "n" * 65, "ann\nbob", None, 42):
        with pytest.raises(ValueError, match="student name"):
            store.record_visit(bad, "intro")
    assert count_rows(store_url, "visits") == 2
    assert store.students() == ("ann", "n" * 64)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda s: s.record_visit("ann", "nope"), "unknown lesson 'nope'"),
        (lambda s: s.complete_lesson("ann", "nope"), "unknown lesson"),
        (lambda s: s.record_check("ann", "rope", "a1", True), "unknown quick check 'a1' for lesson 'rope'"),
        (lambda s: s.record_check("ann", "intro", "r1", True), "no quick checks"),
        (lambda s: s.record_check("ann", "rope", "r1", "yes"), "correct must be True or False"),
        (lambda s: s.record_hint("ann", "nope", 1), "unknown exercise 'nope'"),
        (lambda s: s.record_hint("ann", "rope", 0), "hint tier"),
        (lambda s: s.record_hint("ann", "rope", True), "hint tier"),
        (lambda s: s.record_attempt("ann", "rope", -1, 5), "score must be between 0"),
        (lambda s: s.record_attempt("ann", "rope", 6, 5), "score must be between 0"),
        (lambda s: s.record_attempt("ann", "rope", float("nan"), 5), "finite"),
        (lambda s: s.record_attempt("ann", "rope", 0, 0), "max_score must be greater than 0"),
        (lambda s: s.record_attempt("ann", "rope", "3", 5), "score must be a number"),
        (lambda s: s.record_attempt("ann", "rope", 1, 5, details={"x": object()}), "JSON-able"),
        (lambda s: s.record_attempt("ann", "rope", 1, 5, code=b"bytes"), "code must be text"),
        (lambda s: s.add_comment("ann", "nope", "hi"), "unknown lesson"),
        (lambda s: s.delete_comment("1"), "comment id"),
    ],
)
def test_bad_input_is_a_clear_value_error_and_writes_nothing(store, store_url, call, message):
    assert store.students() == ()  # creates the schema, so the counts below have tables to read
    with pytest.raises(ValueError, match=message):
        call(store)
    assert sum(count_rows(store_url, table) for table in ("visits", "lesson_completions", "check_answers")) == 0
    assert sum(count_rows(store_url, table) for table in ("hints", "attempts", "comments")) == 0


def test_text_with_sql_in_it_is_stored_verbatim(store, store_url):
    name = "Robert'); DROP TABLE visits;--"
    text = "'; DELETE FROM comments; --"
    store.record_visit(name, "intro")
    store.add_comment(name, "intro", text)
    assert count_rows(store_url, "visits", name) == 1
    assert [(c.student, c.text) for c in store.comments("intro")] == [(name, text)]


# -- progress as JSON -----------------------------------------------------------------------------


def test_student_progress_round_trips_through_json(store):
    store.record_check("ann", "rope", "r1", True)
    store.record_attempt("ann", "rope", 1, 3)
    store.record_attempt("ann", "alibi", 2, 3, public_tests_only=True)
    store.record_hint("ann", "alibi", 2)
    progress = store.progress("ann")
    text = progress.to_json()
    assert json.loads(text)["student"] == "ann"
    assert StudentProgress.from_json(text) == progress


# -- threads --------------------------------------------------------------------------------------


def test_one_store_shared_by_threads_keeps_every_write(store, store_url):
    threads, writes = 8, 25
    errors: list[BaseException] = []

    def work(number: int) -> None:
        try:
            for i in range(writes):
                store.record_visit(f"thread-{number}", "intro")
                store.record_attempt(f"thread-{number}", "rope", i % 5, 4 + i % 2)
        except BaseException as error:  # reported below; a thread's exception is otherwise lost
            errors.append(error)

    pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert errors == []
    assert count_rows(store_url, "visits") == threads * writes
    assert count_rows(store_url, "attempts") == threads * writes
    assert all(len(store.attempts(f"thread-{n}")) == writes for n in range(threads))


# -- SQLite only: the default location and a locked file -----------------------------------------


def test_default_url_is_the_sqlite_file_in_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("POSLAB_DB_URL", raising=False)
    monkeypatch.setenv("POSLAB_DATA_DIR", str(tmp_path / "new-folder"))
    store = Store(catalogue=TEST_CATALOGUE)
    store.record_visit("ann", "intro")
    database = tmp_path / "new-folder" / "poslab.db"
    assert database.exists()
    with sqlite3.connect(database) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("SELECT student, lesson FROM visits").fetchall() == [("ann", "intro")]
    store.close()


def test_a_locked_database_ends_in_a_sentence_and_loses_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'locked.db'}"
    store = Store(url, catalogue=TEST_CATALOGUE, lock_wait_seconds=0.5)
    store.record_visit("ann", "intro")
    holder = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with pytest.raises(StoreBusyError, match="database is busy.*not saved.*try again") as caught:
            store.record_visit("ann", "rope")
        assert isinstance(caught.value, RuntimeError)
        assert store.progress("ann").lesson("intro").visited  # WAL: reading still works
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.record_visit("ann", "rope")
    assert count_rows(url, "visits") == 2
    store.close()


def test_the_lock_is_waited_for_when_released_in_time(tmp_path):
    url = f"sqlite:///{tmp_path / 'brief.db'}"
    store = Store(url, catalogue=TEST_CATALOGUE, lock_wait_seconds=10)
    store.record_visit("ann", "intro")
    holder = sqlite3.connect(tmp_path / "brief.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.5, lambda: holder.execute("COMMIT"))  # longer than one busy timeout
    release.start()
    store.record_visit("ann", "rope")
    release.join()
    holder.close()
    assert count_rows(url, "visits") == 2
    store.close()


def test_attempts_frame_columns_are_stable(store):
    table = store.attempts("nobody")
    assert list(table.columns) == [
        "id",
        "student",
        "exercise",
        "time",
        "score",
        "max_score",
        "fraction",
        "public_tests_only",
    ]
    assert isinstance(table, pd.DataFrame)


# -- a database that cannot be opened -------------------------------------------------------------


def test_an_unopenable_sqlite_file_ends_in_a_sentence(tmp_path):
    (tmp_path / "a-folder.db").mkdir()  # a folder where the file should be
    with pytest.raises(StoreUnavailableError, match="could not be used .*POSLAB_DB_URL"):
        store = Store(
            f"sqlite:///{tmp_path / 'a-folder.db'}", catalogue=TEST_CATALOGUE
        )  # its files are made private first
        store.progress("ann")


def test_an_unreachable_server_ends_in_a_sentence_without_the_password():
    pytest.importorskip("psycopg", reason="the PostgreSQL driver is not installed")
    # Port 1 on loopback: nothing listens there, so the connection is refused at once; the store then
    # waits up to connect_seconds for a restarted server before it gives up.
    limits = StoreLimits(connect_seconds=0.5)
    store = Store("postgresql+psycopg://poslab:s3cret@127.0.0.1:1/poslab", catalogue=TEST_CATALOGUE, limits=limits)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="could not be used") as caught:
        store.progress("ann")
    assert limits.connect_seconds <= time.monotonic() - started < limits.connect_seconds + 2.0
    assert "s3cret" not in str(caught.value) and "127.0.0.1:1" in str(caught.value)
