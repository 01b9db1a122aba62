"""Who the student is: name validation, the URL's query parameter, and the OIDC login.

Pure functions over plain mappings (``st.user.to_dict()``, ``st.query_params.to_dict()``), so
the rules are tested without Streamlit and the UI only copies values in and out.

Two ways to know a student:

* **Login** (the deployment configures Streamlit's OIDC ``[auth]`` section): the logged-in
  account's email (or its name, when the provider gives no email) is the identity; the name box
  is not offered.
* **Name** (no login configured): the student types a name. It is kept in the session and in the
  URL (``?student=...``) so a reload keeps it. Anyone can type anyone's name: fine for a class on
  one machine, not for a course on the internet.
"""

from __future__ import annotations

import hmac
import unicodedata
from dataclasses import dataclass
from typing import Mapping

from poslab.store.validation import MAX_NAME_CHARS  # one limit for the form and the store

NAME_PARAM = "student"  # the query parameter that carries the name across reloads


@dataclass(frozen=True)
class Identity:
    name: str
    source: str  # "login" (OIDC), "name" (typed, or restored from the URL)


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


def name_from_query(params: Mapping[str, object]) -> str | None:
    """The valid name in the URL's query parameters, or None (absent or invalid: ask again)."""
    raw = params.get(NAME_PARAM)
    if isinstance(raw, list):  # a repeated parameter: the last one wins, as in st.query_params
        raw = raw[-1] if raw else None
    try:
        return clean_name(raw)
    except ValueError:
        return None


def login_configured(user: Mapping[str, object]) -> bool:
    """Streamlit adds ``is_logged_in`` to ``st.user`` only when an ``[auth]`` section exists."""
    return "is_logged_in" in user


def login_identity(user: Mapping[str, object]) -> str | None:
    """The logged-in account (email first, then name), or None when nobody is logged in."""
    if user.get("is_logged_in") is not True:
        return None
    for claim in ("email", "name", "sub"):
        value = user.get(claim)
        if isinstance(value, str) and value.strip():
            return value.strip()[:MAX_NAME_CHARS]
    return None


def resolve_identity(user: Mapping[str, object], params: Mapping[str, object],
                     session_name: str | None) -> Identity | None:
    """Who is using the app: a login wins; else the session's name; else the URL's; else nobody.

    With a login configured, a typed or URL name is ignored: otherwise the URL would let anyone
    act as anyone despite the login.
    """
    if login_configured(user):
        account = login_identity(user)
        return Identity(account, "login") if account else None
    if session_name:
        return Identity(session_name, "name")
    from_url = name_from_query(params)
    return Identity(from_url, "name") if from_url else None


def password_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; no password configured means nobody gets in."""
    if not expected or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
