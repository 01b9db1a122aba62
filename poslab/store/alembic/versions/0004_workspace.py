"""Version 4: the student's workspace: drafts, practice runs, and the option each quick-check answer chose.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def create_event_table(name: str, *columns: sa.Column | sa.Constraint) -> None:
    op.create_table(
        name,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student", sa.String(64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        *columns,
    )
    op.create_index(f"ix_{name}_student", name, ["student"])


def upgrade() -> None:
    op.create_table(
        "drafts",
        sa.Column("student", sa.String(64), primary_key=True),
        sa.Column("exercise", sa.String(128), primary_key=True),
        sa.Column("code", sa.Text, nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("saved_by", sa.String(128), nullable=False),
    )
    create_event_table(
        "check_choices",
        sa.Column("lesson", sa.String(128), nullable=False),
        sa.Column("check_id", sa.String(128), nullable=False),
        sa.Column("choice", sa.Integer, nullable=False),
        sa.CheckConstraint("choice >= 0", name="check_choice_not_negative"),
    )
    create_event_table(
        "practice_runs",
        sa.Column("exercise", sa.String(128), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.Column("code", sa.Text, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
    )


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
