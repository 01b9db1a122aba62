"""Version 1: visits, lessons done, quick-check answers, hints, attempts and comments.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

The store's first version, as the hand-written migrations made it (attempts had no kind yet).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
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
    create_event_table("visits", sa.Column("lesson", sa.String(128), nullable=False))
    create_event_table("lesson_completions", sa.Column("lesson", sa.String(128), nullable=False))
    create_event_table(
        "check_answers",
        sa.Column("lesson", sa.String(128), nullable=False),
        sa.Column("check_id", sa.String(128), nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
    )
    create_event_table(
        "hints",
        sa.Column("exercise", sa.String(128), nullable=False),
        sa.Column("tier", sa.Integer, nullable=False),
        sa.CheckConstraint("tier >= 1", name="hint_tier_positive"),
    )
    create_event_table(
        "attempts",
        sa.Column("exercise", sa.String(128), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.Column("public_tests_only", sa.Boolean, nullable=False),
        sa.Column("details", sa.Text, nullable=True),
        sa.Column("code", sa.Text, nullable=True),
        sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="score_in_range"),
    )
    create_event_table(
        "comments",
        sa.Column("lesson", sa.String(128), nullable=False),
        sa.Column("text", sa.String(2000), nullable=False),
    )
    op.create_index("ix_comments_lesson", "comments", ["lesson"])


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
