"""The store's roster, sign-in links and sign-in sessions.

A link's token and a session's id are random (``secrets.token_urlsafe(32)``: 256 bits) and leave
this module only once, in clear, to the caller that hands them to the student or the browser;
the tables keep their SHA-256 digest. A roster is active while it has a student. Everything a
page needs on each run to know who is signed in is one read (``sign_in_state``).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import signin_links as links
from .columns import ID_CHARS
from .signin_schema import MAX_EMAIL_CHARS, MAX_SECTION_CHARS, roster_students, signin_links, signin_sessions
from .validation import MAX_NAME_CHARS, clean_student

TOKEN_BYTES = 32
LinkRefusal = Literal["unknown", "expired", "revoked", "not_rostered"]


def digest(secret: str) -> str:
    """What the store keeps of a token or a session id."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _now() -> datetime:
    return datetime.now(UTC)


class RosterEntry(Protocol):
    """A roster's student as ``poslab.roster.RosterStudent`` gives it."""

    name: str
    email: str
    lms_id: str
    section: str
    key: str


@dataclass(frozen=True)
class RosterMember:
    key: str
    name: str
    email: str
    lms_id: str
    section: str
    link_expires: datetime | None  # the student's live link (not revoked, not expired), if any
    link_used: datetime | None  # when that link last signed a browser in


@dataclass(frozen=True)
class RosterChange:
    added: int
    removed: int  # their links are revoked and their sign-ins ended; their work stays in the store
    kept: int


@dataclass(frozen=True)
class SignIn:
    """A browser signed in by a link: ``session`` goes into its cookie, once."""

    student: str
    session: str
    expires_at: datetime


@dataclass(frozen=True)
class SignInState:
    """What one run needs: is a roster active, whom the browser's sign-in names, is a login on the roster."""

    roster_active: bool
    student: str | None = None  # the rostered student the sign-in cookie names (valid, not ended)
    student_name: str = ""  # that student's name on the roster
    login_rostered: bool = False  # the login's key is on the roster


class SignInMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` are the store's transactions."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    # -- the roster ------------------------------------------------------------------------------

    def replace_roster(self, students: Iterable[RosterEntry]) -> RosterChange:
        """Make ``students`` the roster; a student no longer on it loses their links and sign-ins."""
        rows = {}
        for student in students:
            key = clean_student(student.key)
            rows[key] = {
                "key": key,
                "name": (student.name.strip() or key)[:MAX_NAME_CHARS],
                "email": student.email[:MAX_EMAIL_CHARS],
                "lms_id": student.lms_id[:ID_CHARS],
                "section": student.section[:MAX_SECTION_CHARS],
            }
        now = _now()

        def replace(conn: Connection) -> RosterChange:
            before = set(conn.execute(sa.select(roster_students.c.key)).scalars())
            removed = before - set(rows)
            links.withdraw(conn, removed, now)
            conn.execute(sa.delete(roster_students))
            if rows:
                conn.execute(sa.insert(roster_students), [{**row, "added_at": now} for row in rows.values()])
            return RosterChange(len(set(rows) - before), len(removed), len(before & set(rows)))

        return self._write(replace)

    def clear_roster(self) -> RosterChange:
        """No roster: back to typed names; every link is revoked and every sign-in ended."""
        return self.replace_roster(())

    def roster_members(self) -> tuple[RosterMember, ...]:
        """The roster by name, each with their live link's expiry and last use."""
        now = _now()
        live = (
            sa.select(
                signin_links.c.student,
                sa.func.max(signin_links.c.expires_at).label("expires"),
                sa.func.max(signin_links.c.last_used_at).label("used"),
            )
            .where(signin_links.c.revoked_at.is_(None), signin_links.c.expires_at > now)
            .group_by(signin_links.c.student)
            .subquery()
        )
        query = (
            sa.select(roster_students, live.c.expires, live.c.used)
            .join(live, live.c.student == roster_students.c.key, isouter=True)
            .order_by(roster_students.c.name, roster_students.c.key)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(
            RosterMember(row.key, row.name, row.email, row.lms_id, row.section, row.expires, row.used) for row in rows
        )

    # -- links -------------------------------------------------------------------------------------

    def issue_links(self, keys: Iterable[str], lifetime: timedelta) -> dict[str, str]:
        """A new link for each rostered student of ``keys`` (their earlier links revoked, and the
        browsers those signed in signed out: a re-issue is what a leaked link calls for): key -> token.

        The tokens exist in clear only in the answer: hand them out now (a lost one is re-issued)."""
        if lifetime <= timedelta(0):
            raise ValueError(f"a link must be valid for some time, got {lifetime}")
        wanted = [clean_student(key) for key in keys]
        now = _now()

        def issue(conn: Connection) -> dict[str, str]:
            rostered = set(
                conn.execute(sa.select(roster_students.c.key).where(roster_students.c.key.in_(wanted))).scalars()
            )
            unknown = [key for key in wanted if key not in rostered]
            if unknown:
                raise KeyError(f"not on the roster: {', '.join(unknown[:5])}")
            links.revoke(conn, rostered, now)
            links.end_sign_ins(conn, rostered, now)
            tokens = {key: new_secret() for key in dict.fromkeys(wanted)}
            if tokens:
                conn.execute(
                    sa.insert(signin_links),
                    [
                        {
                            "token_hash": digest(token),
                            "student": key,
                            "issued_at": now,
                            "expires_at": now + lifetime,
                            "uses": 0,
                        }
                        for key, token in tokens.items()
                    ],
                )
            return tokens

        return self._write(issue)

    def revoke_links(self, keys: Iterable[str]) -> int:
        """Revoke the students' links and end their sign-ins; how many links were live."""
        wanted = {clean_student(key) for key in keys}
        now = _now()
        return self._write(lambda conn: links.withdraw(conn, wanted, now))

    def link_holder(self, token: str) -> RosterMember | LinkRefusal:
        """Whom a link would sign in (read only: the page that asks before signing in), or why nobody."""
        if not _plausible(token):
            return "unknown"
        found = self._read(lambda conn: links.live_link(conn, digest(token), _now()))
        if isinstance(found, str):
            return found
        return RosterMember(found.key, found.name, found.email, found.lms_id, found.section, None, None)

    def sign_in_with_link(self, token: str, session_lifetime: timedelta) -> SignIn | LinkRefusal:
        """A used link: a new sign-in for its student, or why the link does not sign anyone in."""
        if not _plausible(token):
            return "unknown"
        token_hash, session, now = digest(token), new_secret(), _now()

        def use(conn: Connection) -> SignIn | LinkRefusal:
            link = links.live_link(conn, token_hash, now)
            if isinstance(link, str):
                return link
            conn.execute(
                sa.update(signin_links)
                .where(signin_links.c.token_hash == token_hash)
                .values(last_used_at=now, uses=signin_links.c.uses + 1)
            )
            expires = now + session_lifetime
            conn.execute(
                sa.insert(signin_sessions).values(
                    session_hash=digest(session),
                    student=link.key,
                    link_hash=token_hash,
                    started_at=now,
                    expires_at=expires,
                )
            )
            return SignIn(link.key, session, expires)

        return self._write(use)

    # -- sign-ins ----------------------------------------------------------------------------------

    def sign_in_state(self, session: str | None = None, login_key: str | None = None) -> SignInState:
        """One read: whether a roster is active, whom ``session`` (a cookie's id) signs in, and
        whether ``login_key`` (an OIDC account's key) is on the roster."""
        now = _now()
        session_hash = digest(session) if _plausible(session) else None

        def read(conn: Connection) -> SignInState:
            active = conn.execute(sa.select(roster_students.c.key).limit(1)).first() is not None
            if not active:
                return SignInState(False)
            signed_in = None
            if session_hash is not None:
                signed_in = conn.execute(
                    sa.select(roster_students.c.key, roster_students.c.name)
                    .join(signin_sessions, roster_students.c.key == signin_sessions.c.student)
                    .where(
                        signin_sessions.c.session_hash == session_hash,
                        signin_sessions.c.ended_at.is_(None),
                        signin_sessions.c.expires_at > now,
                    )
                ).first()
            rostered = (
                login_key is not None
                and conn.execute(sa.select(roster_students.c.key).where(roster_students.c.key == login_key)).first()
                is not None
            )
            if signed_in is None:
                return SignInState(True, login_rostered=rostered)
            return SignInState(True, signed_in.key, signed_in.name, rostered)

        return self._read(read)

    def end_sign_ins(self, keys: Iterable[str]) -> int:
        """Sign out every browser the students are signed in on (their links stay valid); how many."""
        wanted = {clean_student(key) for key in keys}
        now = _now()
        return self._write(lambda conn: links.end_sign_ins(conn, wanted, now))

    def end_sign_in(self, session: str) -> None:
        """Sign the browser out: its cookie names no one from now on, in every app process."""
        session_hash, now = digest(session), _now()
        self._write(
            lambda conn: conn.execute(
                sa.update(signin_sessions)
                .where(signin_sessions.c.session_hash == session_hash, signin_sessions.c.ended_at.is_(None))
                .values(ended_at=now)
            )
        )


def _plausible(token: object) -> bool:
    return isinstance(token, str) and 16 <= len(token) <= 256
