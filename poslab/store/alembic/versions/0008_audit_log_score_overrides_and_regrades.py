"""Version 8: the audit log, scores set by hand, and regrades linked to the attempt they replaced.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=True),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.String(255), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_table(
        "score_overrides",
        sa.Column("student", sa.String(64), nullable=False),
        sa.Column("exercise", sa.String(128), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("max_score", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("set_by", sa.String(64), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="override_in_range"),
        sa.PrimaryKeyConstraint("student", "exercise"),
    )
    # Every attempt so far is an original: none names another. SQLite adds a reference only with
    # its column (Alembic would copy the whole table to add it after).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("ALTER TABLE attempts ADD COLUMN regrade_of INTEGER REFERENCES attempts (id)")
    else:
        op.add_column("attempts", sa.Column("regrade_of", sa.Integer(), sa.ForeignKey("attempts.id"), nullable=True))
    op.create_index("ix_attempts_regrade_of", "attempts", ["regrade_of"])


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
