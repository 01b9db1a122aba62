"""Attempts of both kinds in one table: practice runs never count, every writer inserts the same way,
and a database of version 4 (practice runs in a table of their own) migrates to 5 losing nothing.

On SQLite and on PostgreSQL (``test_store_support``). Expected values are what each test wrote.
"""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_store_support import TEST_CATALOGUE, store, store_at_revision, store_url  # noqa: F401 (fixtures)

from poslab.store import AttemptToRecord, Store, TestRow, schema
from poslab.vocabulary import AttemptKind

CODE = "def apply_rope(x):\n    return x\n"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_a_practice_run_is_kept_for_its_student_and_never_counts(store):
    store.record_practice_runs(
        "ann", [AttemptToRecord("rope", 1, 2, {"tests": [], "public_tests_only": True}, CODE, True)]
    )
    store.record_practice_runs(
        "ann",
        [
            AttemptToRecord(
                "rope", 2, 2, {"n": 2}, CODE, True, (TestRow("rope", "exercises/test_rope.py::test_x", True),)
            )
        ],
    )
    runs = store.practice_runs("ann", "rope")
    assert [(run.score, run.max_score, run.code, run.kind) for run in runs] == [
        (1, 2, CODE, "practice"),
        (2, 2, CODE, "practice"),
    ]
    assert runs[0].details == {"tests": [], "public_tests_only": True} and runs[0].public_tests_only
    assert store.practice_runs("bob") == ()
    # Not an attempt: not in the attempts, the progress, or the pass rates, public or not.
    assert store.attempt_details() == () and store.attempts("ann").empty
    assert store.progress("ann").exercise("rope").attempts == 0
    assert store.class_progress().empty
    assert store.per_test_pass_rates(public_tests_only=True).empty


def test_a_practice_run_needs_its_code_and_a_known_exercise(store):
    with pytest.raises(ValueError, match="needs the code it ran"):
        store.record_practice_runs("ann", [AttemptToRecord("rope", 1, 2, {}, None, True)])
    with pytest.raises(ValueError, match="unknown exercise"):
        store.record_practice_runs("ann", [AttemptToRecord("transformers", 1, 2, {}, CODE, True)])
    assert store.practice_runs("ann") == ()


def stored_attempt(url: str) -> dict:
    """The one attempt row and its test rows, read with plain SQL, without id, student and time."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                sa.text("SELECT id, exercise, score, max_score, public_tests_only, details, code, kind FROM attempts")
            ).one()
            tests = conn.execute(
                sa.text("SELECT test, passed FROM attempt_tests WHERE attempt_id = :id ORDER BY test"), {"id": row.id}
            ).all()
    finally:
        engine.dispose()
    return {**row._asdict(), "id": None, "details": json.loads(row.details), "tests": [tuple(test) for test in tests]}


@pytest.mark.parametrize("writer", ["record_attempt", "finish_grading_job"])
def test_a_handed_in_attempt_is_the_same_row_whoever_writes_it(store_url, writer):
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    tests = (TestRow("rope", "norm", True), TestRow("rope", "values", False))
    if writer == "record_attempt":
        store.record_attempt("ann", "rope", 3, 4, {"k": [1]}, CODE, False, tests)
    else:
        store.add_grading_job("j1", "ann", {"rope.py": CODE}, ["rope"], "hidden", "replica-a", 60)
        store.finish_grading_job("j1", {"k": [1]}, [AttemptToRecord("rope", 3, 4, {"k": [1]}, CODE, False, tests)])
    store.close()
    assert stored_attempt(store_url) == {
        "id": None,
        "exercise": "rope",
        "score": 3.0,
        "max_score": 4.0,
        "public_tests_only": False,
        "details": {"k": [1]},
        "code": CODE,
        "kind": "submission",
        "tests": [("norm", True), ("values", False)],
    }


def test_attempts_are_inserted_in_one_place_only():
    """Every ``insert(...attempts...)`` in the store is in ``insert_attempt`` (the revisions, which move
    old rows, are not the store's code and are not searched)."""
    allowed = {("attempts.py", "insert_attempt")}
    found = set()
    for path in sorted((Path(schema.__file__).parent).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "attr", None) == "insert"
                    and node.args
                    and "attempts" in ast.unparse(node.args[0])
                    and "attempt_tests" not in ast.unparse(node.args[0])
                ):
                    found.add((path.name, function.name))
    assert found == allowed
    assert {name for name, _ in allowed} <= {path.name for path in Path(schema.__file__).parent.glob("*.py")}


# -- revision 0004 -> 0005 ---------------------------------------------------------------------------


def make_version_4_database(url: str) -> None:
    """A database as revision 0004 (version 4) left it, with rows in every table that changes."""
    old = store_at_revision(url, "0004").tables
    attempts = old["attempts"]  # no kind yet
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.insert(attempts),
            [
                {
                    "student": "ann",
                    "at": T0,
                    "exercise": "rope",
                    "score": 3,
                    "max_score": 4,
                    "public_tests_only": False,
                    "details": json.dumps({"first": True}),
                    "code": "first = 1\n",
                },
                {
                    "student": "ann",
                    "at": T0 + timedelta(minutes=5),
                    "exercise": "rope",
                    "score": 4,
                    "max_score": 4,
                    "public_tests_only": False,
                    "details": None,
                    "code": None,
                },
                {
                    "student": "bob",
                    "at": T0 + timedelta(minutes=1),
                    "exercise": "alibi",
                    "score": 1,
                    "max_score": 2,
                    "public_tests_only": True,
                    "details": json.dumps({"bundle": 1}),
                    "code": "b = 1\n",
                },
            ],
        )
        conn.execute(
            sa.insert(old["attempt_tests"]),
            [{"attempt_id": 1, "test": "norm", "passed": True}, {"attempt_id": 1, "test": "values", "passed": False}],
        )
        conn.execute(
            sa.insert(old["practice_runs"]),
            [
                {
                    "student": "ann",
                    "at": T0 + timedelta(minutes=2),
                    "exercise": "rope",
                    "score": 1,
                    "max_score": 2,
                    "code": "draft = 1\n",
                    "result": json.dumps({"practice": 1}),
                },
                {
                    "student": "ann",
                    "at": T0 + timedelta(minutes=3),
                    "exercise": "alibi",
                    "score": 0,
                    "max_score": 3,
                    "code": "draft = 2\n",
                    "result": json.dumps({"practice": 2}),
                },
            ],
        )
        conn.execute(
            sa.insert(old["grading_jobs"]).values(
                id="j1",
                student="cem",
                at=T0,
                mode="hidden",
                exercises='["rope"]',
                files='{"rope.py": "x"}',
                status="queued",
                lease_holder="replica-a",
                lease_until=T0,
            )
        )
        conn.execute(
            sa.insert(old["drafts"]).values(
                student="ann", exercise="rope", code="draft = 2\n", revision=3, saved_at=T0, saved_by="tab"
            )
        )
    engine.dispose()


def test_a_version_4_database_migrates_to_5_and_keeps_every_row(store_url):
    make_version_4_database(store_url)
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    assert store.schema_revision == "0008"
    handed_in = store.attempt_details()
    assert [(a.student, a.exercise, a.score, a.public_tests_only, a.details, a.code, a.kind) for a in handed_in] == [
        ("ann", "rope", 3, False, {"first": True}, "first = 1\n", "submission"),
        ("bob", "alibi", 1, True, {"bundle": 1}, "b = 1\n", "submission"),
        ("ann", "rope", 4, False, None, None, "submission"),
    ]
    assert [a.time for a in handed_in] == [T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=5)]
    runs = store.practice_runs("ann")
    assert [(r.exercise, r.score, r.max_score, r.code, r.details, r.time, r.public_tests_only) for r in runs] == [
        ("rope", 1, 2, "draft = 1\n", {"practice": 1}, T0 + timedelta(minutes=2), True),
        ("alibi", 0, 3, "draft = 2\n", {"practice": 2}, T0 + timedelta(minutes=3), True),
    ]
    assert store.progress("ann").exercise("rope").attempts == 2  # the practice runs do not count
    assert store.progress("ann").exercise("rope").best_score == 4
    rates = store.per_test_pass_rates("rope")
    assert {(row.test, row.pass_rate, row.n) for row in rates.itertuples()} == {("norm", 1.0, 1), ("values", 0.0, 1)}
    assert store.grading_job("j1").status == "queued" and store.draft("ann", "rope").revision == 3
    store.close()
    engine = sa.create_engine(store_url)
    try:
        assert not sa.inspect(engine).has_table("practice_runs")
    finally:
        engine.dispose()
    reopened = Store(store_url, catalogue=TEST_CATALOGUE)  # migrating again changes nothing
    assert len(reopened.attempt_details()) == 3 and len(reopened.practice_runs("ann")) == 2
    reopened.close()


def test_a_new_attempt_after_the_migration_is_a_submission_by_default(store_url):
    make_version_4_database(store_url)
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    store.record_attempt("dan", "rope", 1, 4)
    assert [a.kind for a in store.attempt_details("dan")] == [AttemptKind.SUBMISSION]
    store.close()
