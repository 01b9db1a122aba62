"""The class roster, the students' sign-in links, the sign-ins they open, and the Instructor
password's failed attempts.

Nothing here keeps a secret in clear: a link's token and a sign-in's session id are kept as their
SHA-256 digest (``HASH_CHARS`` hex characters), so a copy of the database signs nobody in. The
roster is the set of students who may save anything while a roster is active (a roster is active
while this table has a row). Links and sign-ins are updated in place (revoked, used, ended); every
such update names the row by its digest and says what it expects (not revoked, not ended).
"""

from __future__ import annotations

import sqlalchemy as sa

from .columns import HASH_CHARS, ID_CHARS, UtcDateTime, metadata
from .validation import MAX_NAME_CHARS

MAX_EMAIL_CHARS = 254  # the longest address SMTP carries
MAX_SECTION_CHARS = 255
MAX_CLIENT_CHARS = 64  # an IPv6 address in text, with room

# The students of the active roster, by their key (poslab.lms_sheets.student_key: the email in
# lower case, else the LMS's user id); their work is stored under that key.
roster_students = sa.Table(
    "roster_students",
    metadata,
    sa.Column("key", sa.String(MAX_NAME_CHARS), primary_key=True),
    sa.Column("name", sa.String(MAX_NAME_CHARS), nullable=False),
    sa.Column("email", sa.String(MAX_EMAIL_CHARS), nullable=False),  # "" when the roster has none
    sa.Column("lms_id", sa.String(ID_CHARS), nullable=False),
    sa.Column("section", sa.String(MAX_SECTION_CHARS), nullable=False),
    sa.Column("added_at", UtcDateTime, nullable=False),
)

# A personal sign-in link: usable until it expires or is revoked (re-issuing revokes the earlier).
signin_links = sa.Table(
    "signin_links",
    metadata,
    sa.Column("token_hash", sa.String(HASH_CHARS), primary_key=True),
    sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
    sa.Column("issued_at", UtcDateTime, nullable=False),
    sa.Column("expires_at", UtcDateTime, nullable=False),
    sa.Column("revoked_at", UtcDateTime, nullable=True),
    sa.Column("last_used_at", UtcDateTime, nullable=True),
    sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
)

# A browser signed in by a link: its cookie holds the session id, this table its digest.
signin_sessions = sa.Table(
    "signin_sessions",
    metadata,
    sa.Column("session_hash", sa.String(HASH_CHARS), primary_key=True),
    sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
    sa.Column("link_hash", sa.String(HASH_CHARS), nullable=False),
    sa.Column("started_at", UtcDateTime, nullable=False),
    sa.Column("expires_at", UtcDateTime, nullable=False),
    sa.Column("ended_at", UtcDateTime, nullable=True),  # signed out, or revoked by the instructor
)

# Each wrong Instructor password, by browser session and by client address: the limit is counted
# from these rows, so it holds across app processes.
password_failures = sa.Table(
    "password_failures",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", UtcDateTime, nullable=False, index=True),
    sa.Column("session", sa.String(ID_CHARS), nullable=False, index=True),
    sa.Column("client", sa.String(MAX_CLIENT_CHARS), nullable=False, index=True),
)
