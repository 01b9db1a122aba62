"""Version 5: practice runs become attempts of kind 'practice'; one table, one shape, every row kept.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if "kind" not in {column["name"] for column in sa.inspect(bind).get_columns("attempts")}:
        # Until version 5, every attempt was handed in. (Stores made while version 5 was current
        # created attempts with the column already; they skip this.)
        op.add_column("attempts", sa.Column("kind", sa.String(16), nullable=False, server_default="submission"))
    columns = ("student", "at", "exercise", "score", "max_score")
    practice_runs = sa.table("practice_runs", sa.column("id"), *(sa.column(name) for name in columns),
                             sa.column("code"), sa.column("result"))  # fmt: skip
    attempts = sa.table("attempts", *(sa.column(name) for name in columns), sa.column("public_tests_only"),
                        sa.column("details"), sa.column("code"), sa.column("kind"))  # fmt: skip
    moved = sa.select(
        *(practice_runs.c[name] for name in columns),
        sa.true(),
        practice_runs.c.result,
        practice_runs.c.code,
        sa.literal("practice"),
    ).order_by(practice_runs.c.at, practice_runs.c.id)
    bind.execute(sa.insert(attempts).from_select([*columns, "public_tests_only", "details", "code", "kind"], moved))
    op.drop_index("ix_practice_runs_student", table_name="practice_runs")
    op.drop_table("practice_runs")


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
