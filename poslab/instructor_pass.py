"""The Instructor page's pass: what keeps it unlocked across a reload, never the password itself.

A reload is a new Streamlit session, so an unlock kept in the session is lost. After the password
is typed right, the page hands the browser a ticket (valid ``TICKET_SECONDS``) that the app's own
route exchanges for a pass in an HttpOnly, SameSite=Strict cookie without an expiry date (it ends
with the browser session), and the pass itself expires after ``PASS_HOURS``.

Both are ``purpose.expiry.nonce.mac``: an HMAC-SHA256 keyed by a digest of the instructor password.
Nobody without the password can make one, every app process checks one alike, and a new password
ends every pass. The page's "Lock this page" deletes the cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from typing import Literal

PASS_COOKIE = "poslab_instructor"
PASS_ROUTE = "instructor-pass"  # POST: a ticket in, the cookie out; POST .../end: the cookie deleted
TICKET_SECONDS = 60
PASS_HOURS = 12
MAX_CHARS = 256
Purpose = Literal["ticket", "pass"]


def _key(password: str) -> bytes:
    return hashlib.sha256(b"poslab instructor pass\0" + password.encode("utf-8")).digest()


def _mac(password: str, payload: str) -> str:
    return hmac.new(_key(password), payload.encode("ascii"), hashlib.sha256).hexdigest()


def sign(purpose: Purpose, password: str, now: datetime) -> str:
    """A new ticket or pass, valid from ``now`` (timezone-aware) for its purpose's lifetime."""
    lifetime = timedelta(seconds=TICKET_SECONDS) if purpose == "ticket" else timedelta(hours=PASS_HOURS)
    payload = f"{purpose}.{int((now + lifetime).timestamp())}.{secrets.token_urlsafe(16)}"
    return f"{payload}.{_mac(password, payload)}"


def valid(value: object, purpose: Purpose, password: str, now: datetime) -> bool:
    """Whether ``value`` is an unexpired ticket or pass of ``purpose`` signed with ``password``."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_CHARS or not value.isascii():
        return False
    payload, _, mac = value.rpartition(".")
    parts = payload.split(".")
    if len(parts) != 3 or parts[0] != purpose or not parts[1].isdigit():
        return False
    if not hmac.compare_digest(mac, _mac(password, payload)):
        return False
    return int(parts[1]) > now.timestamp()
