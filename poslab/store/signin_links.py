"""The sign-in tables' writes and reads that several of the store's sign-in methods share
(``signin.SignInMixin``): a link's state, revoking, withdrawing and ending sign-ins, in one transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .signin_schema import roster_students, signin_links, signin_sessions


def live_link(conn: Connection, token_hash: str, now: datetime) -> Any:
    """The rostered student (a roster row) a link signs in, or why it signs in nobody."""
    link = conn.execute(sa.select(signin_links).where(signin_links.c.token_hash == token_hash)).first()
    if link is None:
        return "unknown"
    if link.revoked_at is not None:
        return "revoked"
    if link.expires_at <= now:
        return "expired"
    student = conn.execute(sa.select(roster_students).where(roster_students.c.key == link.student)).first()
    return "not_rostered" if student is None else student


def revoke(conn: Connection, students: set[str], now: datetime) -> int:
    if not students:
        return 0
    return conn.execute(
        sa.update(signin_links)
        .where(
            signin_links.c.student.in_(students), signin_links.c.revoked_at.is_(None), signin_links.c.expires_at > now
        )
        .values(revoked_at=now)
    ).rowcount


def withdraw(conn: Connection, students: set[str], now: datetime) -> int:
    """Revoke the students' links (expired ones included) and end their sign-ins; live links revoked."""
    if not students:
        return 0
    live = revoke(conn, students, now)
    conn.execute(
        sa.update(signin_links)
        .where(signin_links.c.student.in_(students), signin_links.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    end_sign_ins(conn, students, now)
    return live


def end_sign_ins(conn: Connection, students: set[str], now: datetime) -> int:
    if not students:
        return 0
    return conn.execute(
        sa.update(signin_sessions)
        .where(signin_sessions.c.student.in_(students), signin_sessions.c.ended_at.is_(None))
        .values(ended_at=now)
    ).rowcount
