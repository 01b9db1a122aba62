"""A course of two assignments and a class's attempts at known times, seeded straight into the
store (no code is graded), for the app's assignment tests (AppTest and Chromium). The expected
grades are worked out by hand in the tests, from the numbers here."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from poslab.store import AttemptToRecord, Store
from poslab.store.attempts import checked_attempt, insert_attempt
from poslab.vocabulary import AttemptKind

ZONE = timezone(timedelta(hours=-6))
DUE = datetime(2026, 3, 10, 23, 59, tzinfo=ZONE)  # "enc": 10 % off per started day late, at most 30 %
COURSE = """
[[assignment]]
id = "enc"
title = "Encodings 1"
due = 2026-03-10T23:59:00-06:00
late = { policy = "penalty", percent = 10, per = "day", cap = 30 }

[assignment.exercises]
sinusoidal = 4
rope = 6

[[assignment]]
id = "rel"
title = "Relative positions"
due = 2099-01-05T17:00:00+00:00
late = { policy = "none" }

[assignment.exercises]
alibi = 5
t5 = 5
"""


def write_course(folder: Path) -> Path:
    path = folder / "assignments.toml"
    path.write_text(COURSE, encoding="utf-8")
    return path


def attempt_at(store: Store, student: str, exercise: str, fraction: float, at: datetime, public: bool = False) -> None:
    """One submission at a chosen time (the store's writers take the time of now)."""
    checked = checked_attempt(
        AttemptToRecord(exercise, fraction * 4.0, 4.0, None, "x = 1\n", public), AttemptKind.SUBMISSION, store.catalogue
    )
    store._write(lambda conn: insert_attempt(conn, student, checked, at))


def seed_class(store: Store) -> None:
    """ada: sinusoidal on time; rope half on time, full 1.5 days late. zoe: rope full 5 days late.
    103: rope full a day late with a 2-day extension (set in the store), sinusoidal half on time.
    bob: public tests only (nothing counted)."""
    attempt_at(store, "ada@example.edu", "sinusoidal", 1.0, DUE - timedelta(days=1))
    attempt_at(store, "ada@example.edu", "rope", 0.5, DUE - timedelta(hours=2))
    attempt_at(store, "ada@example.edu", "rope", 1.0, DUE + timedelta(hours=36))
    attempt_at(store, "zoe@example.edu", "rope", 1.0, DUE + timedelta(days=5))
    attempt_at(store, "103", "rope", 1.0, DUE + timedelta(days=1))
    attempt_at(store, "103", "sinusoidal", 0.5, DUE - timedelta(days=3))
    attempt_at(store, "bob@example.edu", "rope", 1.0, DUE - timedelta(days=1), public=True)
    store.grant_extension("enc", "103", DUE + timedelta(days=2), "instructor")
