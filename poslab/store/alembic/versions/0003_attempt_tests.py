"""Version 3: one row per test of an attempt, filled once from the details of the attempts stored.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

MAX_TEST_NAME_CHARS = 1000


def test_rows(details_json: str) -> list[tuple[str, bool]]:
    """(test, passed) pairs of an attempt stored before version 3, which kept them only in its details."""
    details = json.loads(details_json)
    tests = details.get("tests") if isinstance(details, dict) else None
    pairs = []
    for test in tests if isinstance(tests, list) else ():
        if not isinstance(test, dict) or not isinstance(test.get("name"), str) or not test["name"]:
            continue
        if isinstance(test.get("passed"), bool):
            pairs.append((test["name"][:MAX_TEST_NAME_CHARS], test["passed"]))
        elif isinstance(test.get("status"), str):
            pairs.append((test["name"][:MAX_TEST_NAME_CHARS], test["status"] == "passed"))
    return pairs


def upgrade() -> None:
    attempt_tests = op.create_table(
        "attempt_tests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("attempt_id", sa.Integer, sa.ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("test", sa.String(MAX_TEST_NAME_CHARS), nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
    )
    op.create_index("ix_attempt_tests_attempt_id", "attempt_tests", ["attempt_id"])
    attempts = sa.table("attempts", sa.column("id", sa.Integer), sa.column("details", sa.Text))
    stored = op.get_bind().execute(
        sa.select(attempts.c.id, attempts.c.details).where(attempts.c.details.is_not(None)).order_by(attempts.c.id)
    )
    rows = [
        {"attempt_id": attempt_id, "test": test, "passed": passed}
        for attempt_id, details in stored
        for test, passed in test_rows(details)
    ]
    if rows:
        op.bulk_insert(attempt_tests, rows)


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
