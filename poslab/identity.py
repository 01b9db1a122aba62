"""Who the student is: the one resolver, the names it accepts, and the Instructor password's checks.

Pure functions over plain values, so the rules are tested without Streamlit: the app's frame
(``app_pages/ui/identity.py``) reads what a run knows into an ``IdentityFrame`` (``st.user``, the
roster's answer for the browser's sign-in cookie, the typed name, the query parameters) and
``resolve`` says who it is. An identity comes from one place, in this order:

1. **Login** (the deployment configures Streamlit's OIDC ``[auth]`` section): the account is the
   provider's stable subject (``iss`` and ``sub``); its key in the store (``login_account``) is its
   email in lower case where the provider says it is verified (``email_verified``, or Entra ID's
   ``xms_edov``), else ``oidc-`` and a digest of ``iss`` and ``sub``. A display name is shown, never
   a key: two "John Smith" accounts stay two students. With a roster active too, only an account
   whose key is on the roster (its verified email) is a student of this class.
2. **Roster sign-in**: a browser signed in by its student's personal link (the cookie's session
   is checked in the store on every run).
3. **Typed name**, only when neither a login nor a roster is configured: the name typed in the
   sidebar, kept in the session and in the URL (``?student=...``) so a reload keeps it. Anyone
   can type anyone's name: for self-study on one's own machine, not for a class on a network.

With a login or a roster, a typed name and ``?student=`` are refused with a sentence that says
how to sign in (``Resolution.refused``).
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from poslab.lms_sheets import is_email
from poslab.store.validation import MAX_NAME_CHARS  # one limit for the form and the store

NAME_PARAM = "student"  # the query parameter that carries a typed name across reloads
IdentityMode = Literal["login", "roster", "name"]  # how this app knows its students
IdentitySource = Literal["login", "roster", "name"]  # where one identity came from

# How a student signs in, per mode: the start of every sentence that says so.
SIGN_IN_HOW: dict[IdentityMode, str] = {
    "name": "Type your name in the sidebar",
    "login": "Log in (in the sidebar)",
    "roster": "Open the personal sign-in link your instructor sent you",
}
PASSWORD_FAILURE_LIMIT = 5  # wrong Instructor passwords per window, per browser session and per address
PASSWORD_WINDOW = timedelta(minutes=1)
LOGIN_KEY_PREFIX = "oidc-"  # a login without a verified email: oidc-<digest of iss and sub>
VERIFIED_EMAIL_CLAIMS = ("email_verified", "xms_edov")  # OIDC's standard claim; Entra ID's optional one


@dataclass(frozen=True)
class Identity:
    name: str  # the student's key in the store
    source: IdentitySource
    display: str = ""  # how the roster names the student ("" : the key says it)

    @property
    def label(self) -> str:
        return f"{self.display} ({self.name})" if self.display and self.display != self.name else self.name


@dataclass(frozen=True)
class IdentityFrame:
    """What one run of the app knows about who is there, read once by the frame."""

    user: Mapping[str, object] = field(default_factory=dict)  # st.user.to_dict(); {} without [auth]
    roster_active: bool = False
    roster_student: str | None = None  # whom the browser's sign-in cookie names (checked in the store)
    roster_name: str = ""
    login_rostered: bool = False  # the login's key is on the active roster
    typed_name: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolution:
    identity: Identity | None
    mode: IdentityMode
    refused: str | None = None  # why a typed name, ?student= or an account is not accepted, and what to do

    @property
    def student(self) -> str | None:
        return self.identity.name if self.identity else None


def clean_name(raw: object) -> str:
    """The name a student typed, trimmed and with runs of spaces collapsed; ValueError says why not."""
    if not isinstance(raw, str):
        raise ValueError("Please type your name as text.")
    name = " ".join(raw.split())
    if not name:
        raise ValueError("Please type a name: it is how your progress is saved.")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"That name has {len(name)} characters; please use at most {MAX_NAME_CHARS}.")
    if any(unicodedata.category(char) in ("Cc", "Cf") for char in name):
        raise ValueError("Names cannot contain control or invisible characters; please retype it.")
    return name


def name_key(name: str) -> str:
    """What two typed names must share to be one student's: case, ``+`` (a space in an address) and
    runs of spaces do not count. ``?student=sam+student`` is "Sam Student"."""
    return " ".join(name.replace("+", " ").split()).casefold()


def known_spelling(name: str, known: Iterable[str]) -> str:
    """The spelling of ``name`` the store already knows (the same ``name_key``), else ``name`` itself."""
    key = name_key(name)
    return next((other for other in known if name_key(other) == key), name)


def name_from_query(params: Mapping[str, object]) -> str | None:
    """The valid name in the URL's query parameters, or None (absent or invalid: ask again)."""
    raw = params.get(NAME_PARAM)
    if isinstance(raw, list):  # a repeated parameter: the last one wins, as in st.query_params
        raw = raw[-1] if raw else None
    try:
        return clean_name(raw.replace("+", " ") if isinstance(raw, str) else raw)
    except ValueError:
        return None


def login_configured(user: Mapping[str, object]) -> bool:
    """Streamlit adds ``is_logged_in`` to ``st.user`` only when an ``[auth]`` section exists."""
    return "is_logged_in" in user


def _claim(user: Mapping[str, object], name: str) -> str:
    value = user.get(name)
    return value.strip() if isinstance(value, str) else ""


def _true(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def verified_email(user: Mapping[str, object]) -> str | None:
    """The account's email in lower case, if the provider says it verified it; else None."""
    email = _claim(user, "email")
    if not is_email(email) or not any(_true(user.get(claim)) for claim in VERIFIED_EMAIL_CLAIMS):
        return None
    return email.lower()


@dataclass(frozen=True)
class LoginAccount:
    key: str  # the student's key in the store: a verified email, else oidc-<digest of iss and sub>
    display: str  # the name the provider gives, shown beside the key ("" : none)


def login_account(user: Mapping[str, object]) -> LoginAccount | None:
    """The logged-in account, keyed by what the provider vouches for and never by a display name."""
    if user.get("is_logged_in") is not True:
        return None
    display = " ".join(_claim(user, "name").split())[:MAX_NAME_CHARS]
    email = verified_email(user)
    if email is not None and len(email) <= MAX_NAME_CHARS:
        return LoginAccount(email, display)
    subject = _claim(user, "sub")
    if not subject:
        return None  # an OIDC ID token always has one: this is not a login to trust
    digest = hashlib.sha256(f"{_claim(user, 'iss')}\n{subject}".encode()).hexdigest()
    return LoginAccount(f"{LOGIN_KEY_PREFIX}{digest[:32]}", display)


def login_identity(user: Mapping[str, object]) -> str | None:
    """The logged-in account's key in the store (``login_account``), or None."""
    account = login_account(user)
    return account.key if account is not None else None


def author_name(key: str, roster_names: Mapping[str, str]) -> str:
    """How a comment's author is shown: the roster's name; else an email's part before the "@"; else
    the key (a typed name, or a login's ``oidc-`` key shortened). Never an email."""
    if roster_names.get(key):
        return roster_names[key]
    if is_email(key):
        return key.split("@", 1)[0]
    if key.startswith(LOGIN_KEY_PREFIX):
        return f"student {key[len(LOGIN_KEY_PREFIX) : len(LOGIN_KEY_PREFIX) + 8]}"
    return key


def identity_mode(user: Mapping[str, object], roster_active: bool) -> IdentityMode:
    if login_configured(user):
        return "login"
    return "roster" if roster_active else "name"


def sign_in_prompt(mode: IdentityMode, purpose: str) -> str:
    """'Type your name in the sidebar to comment.': how to sign in, in this mode, to do ``purpose``."""
    return f"{SIGN_IN_HOW[mode]} to {purpose}."


def _refusal(frame: IdentityFrame, mode: IdentityMode) -> str | None:
    """The sentence for a typed name or ``?student=`` that this mode does not accept."""
    if NAME_PARAM not in frame.params and not frame.typed_name:
        return None
    if mode == "roster":
        return (
            "This class signs in with personal links: a name typed or given in the address (?student=) "
            "is not accepted. Open the sign-in link your instructor sent you; ask them for a new one if it "
            "is lost or has expired."
        )
    return (
        "This app signs students in with a login: a name typed or given in the address (?student=) is "
        "ignored. Log in (in the sidebar) to save your work."
    )


def resolve(frame: IdentityFrame) -> Resolution:
    """Who is using the app: a login, else a roster sign-in, else (only without either) a typed name."""
    mode = identity_mode(frame.user, frame.roster_active)
    login = login_account(frame.user) if mode == "login" else None
    account = login.key if login is not None else None
    if login is not None and (not frame.roster_active or frame.login_rostered):
        return Resolution(Identity(login.key, "login", login.display), mode, _refusal(frame, mode))
    if frame.roster_active and frame.roster_student:
        return Resolution(Identity(frame.roster_student, "roster", frame.roster_name), mode, _refusal(frame, mode))
    if account is not None:  # logged in, but not on the roster of this class
        return Resolution(
            None,
            mode,
            f"You are logged in as {login.display or account}, who is not on this class's roster (as a "
            "verified email): your work cannot be saved. Ask your instructor to add you, or log in "
            "with the account of your email on the roster.",
        )
    if mode != "name":
        return Resolution(None, mode, _refusal(frame, mode))
    if frame.typed_name:
        return Resolution(Identity(frame.typed_name, "name"), mode)
    from_url = name_from_query(frame.params)
    return Resolution(Identity(from_url, "name") if from_url else None, mode)


# -- the Instructor password ---------------------------------------------------------------------------


def password_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; no password configured means nobody gets in."""
    if not expected or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def named_instructor(identity: Identity | None, instructors: frozenset[str]) -> bool:
    """Whether this is a named instructor (``POSLAB_INSTRUCTORS``), as a login or a roster link
    vouches: a typed name could be anyone's."""
    return identity is not None and identity.source != "name" and identity.name in instructors


def password_limits(
    failures: tuple[Sequence[datetime], Sequence[datetime]], instructor: bool
) -> tuple[Sequence[datetime], ...]:
    """The failure lists that limit this session: its own and its address's; a named instructor's own
    session's only (an address may be shared with anyone)."""
    by_session, by_address = failures
    return (by_session,) if instructor else (by_session, by_address)


def password_wait(failure_lists: Sequence[Sequence[datetime]], now: datetime) -> timedelta | None:
    """How long until another password may be tried, or None: each list (one browser session's, one
    address's wrong passwords in the last window, oldest first) allows ``PASSWORD_FAILURE_LIMIT``."""
    waits = [
        failures[-PASSWORD_FAILURE_LIMIT] + PASSWORD_WINDOW - now
        for failures in failure_lists
        if len(failures) >= PASSWORD_FAILURE_LIMIT
    ]
    wait = max(waits, default=None)
    return wait if wait is not None and wait > timedelta(0) else None
