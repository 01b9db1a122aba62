"""Who is studying: the app's frame reads what a run knows, ``poslab.identity.resolve`` decides.

``resolve_run`` is called by app.py once per run, before the page: it reads ``st.user`` (whether a
login is configured is asked once per session), the sign-in cookie, the typed name and the query
parameters, asks the store one question (``Store.sign_in_state``: is a roster active, whom does
this browser's sign-in name), and keeps the answer for the run (``IDENTITY_KEY``). Every page then
asks ``current_student()``, which reads nothing more. A fragment's rerun keeps the answer of the
page's last full run.

When the student changes within a browser session (a name changed, a sign-out, another account),
everything this session kept for the one before is dropped: nothing of theirs is shown to the next.

The sidebar (``sidebar.py``) draws what this resolved.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import streamlit as st
from streamlit import config

from app_pages.ui.store_calls import store_call
from poslab.config import Settings
from poslab.identity import (
    IdentityFrame,
    IdentityMode,
    Resolution,
    known_spelling,
    login_configured,
    login_identity,
    resolve,
    sign_in_prompt,
)
from poslab.roles import Actor, PageAccess, page_access
from poslab.signin import app_origin, cookie_name, same_origin

STUDENT_KEY = "student_name"  # the typed name (typed-name mode only); mirrored in the URL as ?student=
LOGIN_KEY = "login_configured"  # this session's answer: is Streamlit's login ([auth]) configured?
IDENTITY_KEY = "identity"  # this run's Resolution
OWNER_KEY = "identity_owner"  # the student whose work this session's state holds
UNLOCKED_KEY = "instructor_unlocked"  # True once the Instructor page's password was right (instructor/lock.py)
BROWSER_SESSION_KEY = "workspace_session"  # this browser session's id, kept with each draft it saves
SPELLINGS_KEY = "name_spellings"  # a typed name -> the store's spelling of it (poslab.identity.known_spelling)
KEPT_KEYS = {STUDENT_KEY, LOGIN_KEY, IDENTITY_KEY, OWNER_KEY, BROWSER_SESSION_KEY, SPELLINGS_KEY}


def session_id() -> str:
    """This browser session's id: drafts say which session saved them, the lock counts failures by it."""
    return st.session_state.setdefault(BROWSER_SESSION_KEY, uuid.uuid4().hex)


def instructor_unlocked() -> bool:
    return bool(st.session_state.get(UNLOCKED_KEY))


def instructor_access(password_unlocked: bool | None = None) -> PageAccess:
    """What the Instructor page lets this run do (``poslab.roles.page_access``): named instructors
    and TAs by their sign-in, else the shared password (``password_unlocked``: default, this session's)."""
    settings, found = Settings.from_env(), resolution()
    unlocked = instructor_unlocked() if password_unlocked is None else password_unlocked
    return page_access(found.mode, found.identity, settings.instructors, settings.tas, unlocked)


def acting() -> Actor | None:
    """Who acts on the class from this session, with their role; None: nobody may."""
    return instructor_access().actor


def user() -> dict:
    """``st.user``, read only where a login is configured.

    Each read of ``st.user`` looks for the secrets file's ``[auth]`` section, and without a
    secrets file Streamlit looks for it again every time (several times a run). Whether a login
    is configured is asked once per session; without one, nobody is logged in.
    """
    configured = st.session_state.get(LOGIN_KEY)
    if configured is None:
        found = st.user.to_dict()
        st.session_state[LOGIN_KEY] = login_configured(found)
        return found
    return st.user.to_dict() if configured else {}


def app_origin_of_this_session() -> tuple[str, str, int] | None:
    """The app's origin as this session's websocket addressed it (``poslab.signin.app_origin``)."""
    headers = st.context.headers
    peer = st.context.ip_address
    return app_origin(
        headers.get("Host"),
        bool(config.get_option("server.sslCertFile")),
        peer if isinstance(peer, str) else None,
        headers.get("X-Forwarded-Proto"),
        headers.get("X-Forwarded-Host"),
        Settings.from_env().trusted_proxies,
    )


def own_page_cookie(name: str) -> str | None:
    """The cookie ``name`` as this session's websocket sent it, if the app's own page opened that
    websocket: a page of another origin (another port of this host) gets none of the app's cookies.

    Streamlit's own check lets any port of the host through; a request without ``Origin`` is not a
    browser's (browsers send it on every websocket), so it cannot carry a browser's cookie unasked."""
    found = st.context.cookies.get(name)
    if not isinstance(found, str) or not found:  # AppTest's context has no cookies
        return None
    origin = st.context.headers.get("Origin")
    return found if origin is None or same_origin(origin, app_origin_of_this_session()) else None


def sign_in_cookie() -> str | None:
    """The browser's roster sign-in (a random session id), from the app's own page only."""
    app = app_origin_of_this_session()
    return own_page_cookie(cookie_name(https=app is not None and app[0] == "https"))


def _frame() -> IdentityFrame | None:
    account = user()
    login = login_identity(account)
    state = store_call("check who is signed in", lambda opened: opened.sign_in_state(sign_in_cookie(), login), None)
    if state is None:
        return None
    return IdentityFrame(
        account,
        state.roster_active,
        state.student,
        state.student_name,
        state.login_rostered,
        st.session_state.get(STUDENT_KEY),
        st.query_params.to_dict(),
    )


def _forget_the_last_students_work(student: str | None) -> None:
    owner = st.session_state.get(OWNER_KEY)
    if owner is not None and owner != student:
        for key in [key for key in st.session_state.keys() if key not in KEPT_KEYS]:
            del st.session_state[key]
    st.session_state[OWNER_KEY] = student


def _known_spelling(found: Resolution) -> Resolution:
    """A typed name as the store spells it ("sam student" is "Sam Student"), asked once per name and session."""
    if found.identity is None or found.identity.source != "name":
        return found
    spellings = st.session_state.setdefault(SPELLINGS_KEY, {})
    name = found.identity.name
    if name not in spellings:
        known = store_call("look up your name", lambda opened: opened.students(), None)
        if known is None:
            return found
        spellings[name] = known_spelling(name, known)
    return replace(found, identity=replace(found.identity, name=spellings[name]))


def resolve_run() -> Resolution:
    """Who is here on this run (app.py calls it once, before the page)."""
    frame = _frame()
    if frame is None:  # the store could not say (store_call has said why): nobody saves on this run
        last = st.session_state.get(IDENTITY_KEY)
        resolution = Resolution(None, last.mode if last else "name")
    else:
        resolution = _known_spelling(resolve(frame))
        _forget_the_last_students_work(resolution.student)
    st.session_state[IDENTITY_KEY] = resolution
    return resolution


def resolution() -> Resolution:
    found = st.session_state.get(IDENTITY_KEY)
    return found if found is not None else resolve_run()


def current_student() -> str | None:
    """The student of this run: a login, a roster sign-in, or (without either) a typed name."""
    return resolution().student


def mode() -> IdentityMode:
    return resolution().mode


def prompt(purpose: str) -> str:
    """How to sign in, in this app's mode, to do ``purpose``: 'Type your name in the sidebar to comment.'"""
    return sign_in_prompt(mode(), purpose)
