"""Writes the store fixtures of versions 1 to 6 (``vN.sqlite.sql``, ``vN.postgresql.sql``) with the
hand-written migrations of ``poslab.store.schema`` as they were before Alembic, and rows in every
table. Run once: ``python tests/store_versions/generate.py POSTGRES_URL``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.schema import CreateSchema, DropSchema

from poslab.store import schema, signin_schema
from poslab.store.columns import UtcDateTime

HERE = Path(__file__).resolve().parent
T = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def minute(n: int) -> datetime:
    return T + timedelta(minutes=n)


def attempts_before_version_5(of: sa.MetaData) -> sa.Table:
    """The attempts table as versions 1 to 4 made it: no kind column."""
    return sa.Table(
        "attempts",
        of,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student", sa.String(schema.MAX_NAME_CHARS), nullable=False, index=True),
        sa.Column("at", UtcDateTime, nullable=False),
        sa.Column("exercise", sa.String(schema.ID_CHARS), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.Column("public_tests_only", sa.Boolean, nullable=False),
        sa.Column("details", sa.Text, nullable=True),
        sa.Column("code", sa.Text, nullable=True),
        sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="score_in_range"),
    )


def make_store(conn: sa.Connection, version: int) -> None:
    schema.schema_version.create(conn)
    old_attempts = attempts_before_version_5(sa.MetaData())
    for number in range(1, version + 1):
        if number == 1 and version < 5:
            old_attempts.create(conn)
            schema.metadata.create_all(conn, tables=[t for t in schema._VERSION_1_TABLES if t.name != "attempts"])
        else:
            schema.MIGRATIONS[number - 1](conn)
        conn.execute(sa.insert(schema.schema_version).values(version=number, applied_at=minute(-60 + number)))
    attempts = old_attempts if version < 5 else schema.attempts
    conn.execute(
        sa.insert(schema.visits),
        [{"student": "ann", "lesson": "intro", "at": minute(0)}, {"student": "bob", "lesson": "rope", "at": minute(1)}],
    )
    conn.execute(sa.insert(schema.lesson_completions).values(student="ann", lesson="intro", at=minute(2)))
    conn.execute(
        sa.insert(schema.check_answers),
        [
            {"student": "ann", "lesson": "rope", "check_id": "r1", "correct": True, "at": minute(3)},
            {"student": "bob", "lesson": "rope", "check_id": "r2", "correct": False, "at": minute(4)},
        ],
    )
    conn.execute(sa.insert(schema.hints).values(student="bob", exercise="rope", tier=2, at=minute(5)))
    details = {"tests": [{"name": "norm", "passed": True}, {"name": "shape", "status": "failed"}]}
    handed_in = [
        dict(student="ann", exercise="rope", score=3, max_score=4, public_tests_only=False, at=minute(6),
             details=json.dumps(details), code="ann = 1\n"),
        dict(student="bob", exercise="alibi", score=2, max_score=2, public_tests_only=True, at=minute(7),
             details=None, code=None),
    ]  # fmt: skip
    conn.execute(sa.insert(attempts), handed_in)
    conn.execute(sa.insert(schema.comments).values(student="bob", lesson="rope", text="Why sin and cos?", at=minute(8)))
    if version >= 2:
        conn.execute(
            sa.insert(schema.grading_jobs),
            [
                dict(id="job-1", student="cem", at=minute(9), mode="hidden", exercises='["rope"]',
                     files='{"rope.py": "x = 1\\n"}', status="queued", lease_holder="replica-a",
                     lease_until=minute(10), result=None, message=None, finished_at=None),
                dict(id="job-2", student="ann", at=minute(11), mode="public", exercises='["alibi"]',
                     files='{"alibi.py": "y = 2\\n"}', status="failed", lease_holder=None, lease_until=None,
                     result=None, message="The grader stopped.", finished_at=minute(12)),
            ],
        )  # fmt: skip
    if version >= 3:
        conn.execute(
            sa.insert(schema.attempt_tests),
            [{"attempt_id": 1, "test": "norm", "passed": True}, {"attempt_id": 1, "test": "shape", "passed": False}],
        )
    if version >= 4:
        conn.execute(
            sa.insert(schema.drafts).values(
                student="ann", exercise="rope", code="draft = 3\n", revision=3, saved_at=minute(13), saved_by="tab-1"
            )
        )
        conn.execute(
            sa.insert(schema.check_choices).values(student="ann", lesson="rope", check_id="r1", choice=2, at=minute(3))
        )
    practice = dict(student="ann", exercise="alibi", score=1, max_score=2, at=minute(14), code="practice = 1\n")
    if version == 4:
        conn.execute(sa.insert(schema.practice_runs).values(**practice, result='{"practice": 1}'))
    if version >= 5:
        conn.execute(
            sa.insert(schema.attempts).values(
                **practice, public_tests_only=True, details='{"practice": 1}', kind="practice"
            )
        )
    if version >= 6:
        conn.execute(
            sa.insert(signin_schema.roster_students),
            [
                dict(key="ann@uni.edu", name="Ann Lee", email="ann@uni.edu", lms_id="101", section="A",
                     added_at=minute(15)),
                dict(key="bob@uni.edu", name="Bob Ng", email="bob@uni.edu", lms_id="102", section="B",
                     added_at=minute(15)),
            ],
        )  # fmt: skip
        conn.execute(
            sa.insert(signin_schema.signin_links).values(
                token_hash="a" * 64, student="ann@uni.edu", issued_at=minute(16), expires_at=minute(16 + 60 * 24),
                revoked_at=None, last_used_at=minute(17), uses=1,
            )
        )  # fmt: skip
        conn.execute(
            sa.insert(signin_schema.signin_sessions).values(
                session_hash="b" * 64, student="ann@uni.edu", link_hash="a" * 64, started_at=minute(17),
                expires_at=minute(17 + 60 * 24 * 30), ended_at=None,
            )
        )  # fmt: skip
        conn.execute(
            sa.insert(signin_schema.password_failures).values(at=minute(18), session="tab-9", client="10.0.0.7")
        )


def write_sqlite(version: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.db"
        engine = sa.create_engine(f"sqlite:///{path}")
        with engine.begin() as conn:
            make_store(conn, version)
        engine.dispose()
        connection = sqlite3.connect(path)
        text = "\n".join(connection.iterdump()) + "\n"
        connection.close()
    (HERE / f"v{version}.sqlite.sql").write_text(text)


def write_postgres(version: int, base_url: str) -> None:
    name = f"fixture_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base_url)
    with admin.begin() as conn:
        conn.execute(CreateSchema(name))
    url = sa.make_url(base_url)
    try:
        engine = sa.create_engine(url.update_query_dict({"options": f"-csearch_path={name}"}))
        with engine.begin() as conn:
            make_store(conn, version)
        engine.dispose()
        dump = subprocess.run(
            ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--schema", name,
             "-h", url.host, "-p", str(url.port), "-U", url.username, url.database],
            env={"PGPASSWORD": url.password}, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    finally:
        with admin.begin() as conn:
            conn.execute(DropSchema(name, cascade=True))
        admin.dispose()
    lines = [
        line
        for line in dump.splitlines()
        if not line.startswith(("--", "\\", "CREATE SCHEMA", "SELECT pg_catalog.set_config('search_path'", "SET "))
    ]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines).replace(f"{name}.", "")).strip() + "\n"
    (HERE / f"v{version}.postgresql.sql").write_text(text)


if __name__ == "__main__":
    for number in range(1, 7):
        write_sqlite(number)
        write_postgres(number, sys.argv[1])
