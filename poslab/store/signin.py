"""The store's sign-in links and sign-in sessions (the roster itself: ``class_roster``).

A link's token and a session's id are random (``secrets.token_urlsafe(32)``: 256 bits) and leave
this module only once, in clear, to the caller that hands them to the student or the browser;
the tables keep their SHA-256 digest. A roster is active while it has a student. Everything a
page needs on each run to know who is signed in is one read (``sign_in_state``). What an
instructor does here is in the audit log, in the same transaction; ``actor`` (a keyword) says who.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.roles import Actor
from poslab.vocabulary import AuditAction

from . import signin_links as links
from .audit import checked_actor, keys_target, record_action
from .class_roster import RosterMember
from .signin_schema import roster_students, signin_links, signin_sessions
from .validation import clean_student

TOKEN_BYTES = 32
LinkRefusal = Literal["unknown", "expired", "revoked", "not_rostered"]


def digest(secret: str) -> str:
    """What the store keeps of a token or a session id."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _now() -> datetime:
    return datetime.now(UTC)


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

    # -- links -------------------------------------------------------------------------------------

    def issue_links(
        self, keys: Iterable[str], lifetime: timedelta, *, actor: Actor | str | None = None
    ) -> dict[str, str]:
        """A new link for each rostered student of ``keys`` (their earlier links revoked, and the
        browsers those signed in signed out: a re-issue is what a leaked link calls for): key -> token.

        The tokens exist in clear only in the answer: hand them out now (a lost one is re-issued)."""
        if lifetime <= timedelta(0):
            raise ValueError(f"a link must be valid for some time, got {lifetime}")
        wanted, who = [clean_student(key) for key in keys], checked_actor(actor, AuditAction.ISSUE_LINKS)
        now = _now()

        def issue(conn: Connection) -> dict[str, str]:
            rostered = set(
                conn.execute(sa.select(roster_students.c.key).where(roster_students.c.key.in_(wanted))).scalars()
            )
            unknown = [key for key in wanted if key not in rostered]
            if unknown:
                raise KeyError(f"not on the roster: {', '.join(unknown[:5])}")
            reissued = links.revoke(conn, rostered, now)
            links.end_sign_ins(conn, rostered, now)
            detail = f"{len(rostered)} link(s), valid {lifetime.days} days; {reissued} earlier link(s) withdrawn"
            record_action(conn, who, AuditAction.ISSUE_LINKS, keys_target(rostered), detail)
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

    def revoke_links(self, keys: Iterable[str], *, actor: Actor | str | None = None) -> int:
        """Revoke the students' links and end their sign-ins; how many links were live."""
        wanted, who, now = (
            {clean_student(key) for key in keys},
            checked_actor(actor, AuditAction.WITHDRAW_LINKS),
            _now(),
        )

        def withdraw(conn: Connection) -> int:
            live = links.withdraw(conn, wanted, now)
            record_action(conn, who, AuditAction.WITHDRAW_LINKS, keys_target(wanted), f"{live} live link(s) withdrawn")
            return live

        return self._write(withdraw)

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

    def end_sign_ins(self, keys: Iterable[str], *, actor: Actor | str | None = None) -> int:
        """Sign out every browser the students are signed in on (their links stay valid); how many."""
        wanted, who, now = {clean_student(key) for key in keys}, checked_actor(actor, AuditAction.END_SIGN_INS), _now()

        def end(conn: Connection) -> int:
            ended = links.end_sign_ins(conn, wanted, now)
            record_action(conn, who, AuditAction.END_SIGN_INS, keys_target(wanted), f"{ended} browser(s) signed out")
            return ended

        return self._write(end)

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
