"""Who may act on the class: the two roles, who holds one, and what each may do.

With a login or a roster, the Instructor page opens to the people named in ``POSLAB_INSTRUCTORS``
(everything) and ``POSLAB_TAS`` (view and regrade), as a login or a roster link vouches for them;
a typed name proves nothing. The shared password (``POSLAB_INSTRUCTOR_PASSWORD``) unlocks a browser
nobody is signed in on, as an instructor; a signed-in student named in neither list never gets it.
Pure: the page asks ``page_access``, and every action is checked by ``require`` in the library.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from poslab.vocabulary import AuditAction

if TYPE_CHECKING:
    from poslab.identity import Identity, IdentityMode


class Role(StrEnum):
    INSTRUCTOR = "instructor"
    TA = "ta"


ROLE_TITLES = {Role.INSTRUCTOR: "instructor", Role.TA: "TA"}
TA_MAY = frozenset({AuditAction.REGRADE})  # beside viewing everything the page shows
TA_NOTE = (
    "As a TA you may view the class and regrade. Overrides, exports, the roster, its links and sign-ins, "
    "extensions and deleting comments are for instructors (POSLAB_INSTRUCTORS)."
)
PASSWORD_ACTOR = "password"  # who an action is recorded as when the shared password unlocked the page
SCRIPT_ACTOR = "script"  # an action called from Python without an actor (a script, the command line)


@dataclass(frozen=True)
class Actor:
    """Who is acting: their key (or ``PASSWORD_ACTOR``) and their role."""

    name: str
    role: Role

    @property
    def label(self) -> str:
        return f"{self.name} ({ROLE_TITLES[self.role]})"


class ActionRefused(PermissionError):
    """The actor's role does not allow the action; the message says who may."""


def may(actor: Actor | None, action: AuditAction) -> bool:
    if actor is None:
        return False
    return actor.role == Role.INSTRUCTOR or AuditAction(action) in TA_MAY


def refusal(actor: Actor | None, action: AuditAction) -> str | None:
    """Why ``actor`` may not do ``action`` (a sentence), or None when they may."""
    if may(actor, action):
        return None
    who = "Nobody signed in" if actor is None else f"{actor.name} is a {ROLE_TITLES[actor.role]}:"
    return f"{who} only an instructor may {ACTION_WORDS[AuditAction(action)]}. TAs may view the class and regrade."


def require(actor: Actor | str | None, action: AuditAction) -> str:
    """The name to record for ``actor``; ``ActionRefused`` when its role does not allow ``action``.
    A plain name (or None: ``SCRIPT_ACTOR``) comes from a script with the store's own rights."""
    if actor is None or isinstance(actor, str):
        return (actor or SCRIPT_ACTOR).strip() or SCRIPT_ACTOR
    problem = refusal(actor, action)
    if problem is not None:
        raise ActionRefused(problem)
    return actor.name


def role_of(identity: Identity | None, instructors: frozenset[str], tas: frozenset[str]) -> Role | None:
    """The role a login or a roster sign-in is named for (an instructor named in both is an instructor)."""
    if identity is None or identity.source == "name":
        return None
    if identity.name in instructors:
        return Role.INSTRUCTOR
    return Role.TA if identity.name in tas else None


@dataclass(frozen=True)
class PageAccess:
    """What the Instructor page does for this run: let ``actor`` in, ask for the password, or stay locked."""

    actor: Actor | None  # set: in, with this role
    password: bool = False  # ask for the shared password (an instructor's)
    locked: str | None = None  # why the page stays locked


def page_access(
    mode: IdentityMode,
    identity: Identity | None,
    instructors: frozenset[str],
    tas: frozenset[str],
    password_unlocked: bool,
) -> PageAccess:
    """Named people get their role; a signed-in student named in neither list is locked out; a
    browser nobody is signed in on (or, with neither list set, anyone) may use the password."""
    role = role_of(identity, instructors, tas)
    if role is not None:
        return PageAccess(Actor(identity.name, role))
    if mode != "name" and identity is not None and (instructors or tas):
        return PageAccess(
            None,
            locked=f"You are signed in as {identity.label}, who is neither an instructor nor a TA of this class "
            "(POSLAB_INSTRUCTORS, POSLAB_TAS): this page is for them only.",
        )
    if password_unlocked:
        return PageAccess(Actor(PASSWORD_ACTOR, Role.INSTRUCTOR))
    return PageAccess(None, password=True)


ACTION_WORDS = {
    AuditAction.ISSUE_LINKS: "issue or re-issue sign-in links",
    AuditAction.WITHDRAW_LINKS: "withdraw sign-in links",
    AuditAction.END_SIGN_INS: "sign students out",
    AuditAction.ROSTER: "change the roster",
    AuditAction.EXTENSION: "grant extensions",
    AuditAction.WITHDRAW_EXTENSION: "withdraw extensions",
    AuditAction.OVERRIDE: "override a score",
    AuditAction.CLEAR_OVERRIDE: "clear an override",
    AuditAction.REGRADE: "regrade",
    AuditAction.DELETE_COMMENT: "delete comments",
    AuditAction.EXPORT: "export the class's code or grades",
}
