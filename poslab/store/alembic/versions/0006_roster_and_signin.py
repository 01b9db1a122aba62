"""Version 6: the class roster, sign-in links and sign-ins (kept as digests), the password's failures.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

The last version of the hand-written migrations: a store recorded at version N in their
``schema_version`` table is stamped at revision 000N and upgraded from there.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "roster_students",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("lms_id", sa.String(128), nullable=False),
        sa.Column("section", sa.String(255), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "signin_links",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("student", sa.String(64), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_index("ix_signin_links_student", "signin_links", ["student"])
    op.create_table(
        "signin_sessions",
        sa.Column("session_hash", sa.String(64), primary_key=True),
        sa.Column("student", sa.String(64), nullable=False),
        sa.Column("link_hash", sa.String(64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_signin_sessions_student", "signin_sessions", ["student"])
    op.create_table(
        "password_failures",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("session", sa.String(128), nullable=False),
        sa.Column("client", sa.String(64), nullable=False),
    )
    for column in ("at", "session", "client"):
        op.create_index(f"ix_password_failures_{column}", "password_failures", [column])


def downgrade() -> None:
    raise NotImplementedError("the store is not downgraded: restore the backup written before the upgrade")
