"""Version 2: submissions handed to the grading service, one pending per student.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "grading_jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("student", sa.String(64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("exercises", sa.Text, nullable=False),
        sa.Column("files", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("lease_holder", sa.String(128), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_grading_jobs_student", "grading_jobs", ["student"])
    op.create_index("ix_grading_jobs_at", "grading_jobs", ["at"])
    pending = sa.text("status = 'queued'")
    op.create_index(
        "one_pending_job_per_student",
        "grading_jobs",
        ["student"],
        unique=True,
        sqlite_where=pending,
        postgresql_where=pending,
    )


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
