"""Export all code: one zip of every submission's code, by student, exercise and attempt, for a
roster of 40 (tests/console_seed.py) with attempts at known times; keys that could escape the zip
are made safe; practice runs and attempts without code are left out. The expected file list is
written out here from what is seeded, not from the code under test."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import UTC, datetime, timedelta

import pytest

from poslab.roster import read_roster
from poslab.store import AttemptToRecord, Store
from poslab.store.attempts import checked_attempt, insert_attempt
from poslab.vocabulary import AttemptKind
from tests.console_seed import CLASS_SIZE, key, roster_csv

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOSTILE_KEYS = {"../../etc/cron.d/x": ".._.._etc_cron.d_x", "/abs/path": "_abs_path", "..": "__", "a\\b:c": "a_b_c"}


def submit(store: Store, student: str, exercise: str, at: datetime, code: str | None, kind=AttemptKind.SUBMISSION):
    checked = checked_attempt(AttemptToRecord(exercise, 1.0, 2.0, None, code, False), kind, store.catalogue)
    store._write(lambda conn: insert_attempt(conn, student, checked, at))


def seeded_times(number: int) -> dict[str, list[datetime]]:
    """Student ``number``'s submissions: rope (number % 3 of them), alibi for every fifth student."""
    times = {"rope": [START + timedelta(days=number, hours=attempt) for attempt in range(number % 3)]}
    if number % 5 == 0:
        times["alibi"] = [START + timedelta(days=number, minutes=30)]
    return times


@pytest.fixture
def store(app_env) -> Store:
    store = Store(app_env)
    store.replace_roster(read_roster(roster_csv()).students)  # the class of 40
    for number in range(1, CLASS_SIZE + 1):
        for exercise, times in seeded_times(number).items():
            for attempt, at in enumerate(times, start=1):
                submit(store, key(number), exercise, at, code_of(number, exercise, attempt))
    for student in HOSTILE_KEYS:
        submit(store, student, "t5", START, "evil = True\n")
    submit(store, key(7), "rope", START + timedelta(days=60), "practice\n", kind=AttemptKind.PRACTICE)
    submit(store, key(8), "rope", START + timedelta(days=60), None)  # kept without code
    return store


def code_of(number: int, exercise: str, attempt: int) -> str:
    return f"# {key(number)} {exercise} attempt {attempt}: café\n"


def expected_files() -> dict[str, str]:
    """Path -> code, worked out from the seeding above."""
    files = {
        f"{key(number)}/{exercise}/attempt-{attempt}-{at:%Y%m%dT%H%M%SZ}/{exercise}.py": code_of(
            number, exercise, attempt
        )
        for number in range(1, CLASS_SIZE + 1)
        for exercise, times in seeded_times(number).items()
        for attempt, at in enumerate(times, start=1)
    }
    files |= {f"{folder}/t5/attempt-1-20260302T090000Z/t5.py": "evil = True\n" for folder in HOSTILE_KEYS.values()}
    return files


def test_the_zip_holds_every_submissions_code_by_student_exercise_and_attempt(store, tmp_path):
    archive = zipfile.ZipFile(io.BytesIO(store.export_code_zip()))
    expected = expected_files()
    assert sorted(archive.namelist()) == sorted([*expected, "index.csv"])
    assert len(expected) == 40 + 8 + 4  # rope: n % 3 for n = 1..40 (13 x 1 + 13 x 2 + 1); alibi: 8; hostile: 4
    assert all(archive.read(path).decode("utf-8") == code for path, code in expected.items())
    archive.extractall(tmp_path / "out")
    assert all(path.resolve().is_relative_to(tmp_path / "out") for path in (tmp_path / "out").rglob("*"))


def test_the_index_lists_each_attempt_with_the_students_key_as_stored(store):
    archive = zipfile.ZipFile(io.BytesIO(store.export_code_zip()))
    rows = list(csv.DictReader(io.StringIO(archive.read("index.csv").decode("utf-8"))))
    assert len(rows) == len(expected_files())
    hostile = {row["student"]: row["path"] for row in rows if row["exercise"] == "t5"}
    assert hostile == {
        student: f"{folder}/t5/attempt-1-20260302T090000Z/t5.py" for student, folder in HOSTILE_KEYS.items()
    }


def test_last_submitted_code_is_each_students_newest_with_code(store):
    last = store.last_submitted_code("rope")
    # rope: number % 3 attempts, so students 1, 2, 4, 5, ... (not multiples of 3); s08's codeless attempt is newer
    assert set(last) == {key(n) for n in range(1, CLASS_SIZE + 1) if n % 3}
    assert last[key(2)] == code_of(2, "rope", 2) and last[key(8)] == code_of(8, "rope", 2)


@pytest.mark.parametrize(
    "name, folder",
    [("ann@uni.edu", "ann@uni.edu"), ("../x", ".._x"), ("...", "___"), ("a/b", "a_b"), ("tab\tkey", "tab_key")],
)
def test_a_key_becomes_one_safe_folder_name(name, folder):
    from poslab.store.code_export import safe_folder

    assert safe_folder(name) == folder


def test_a_students_own_zip_has_their_submissions_and_drafts_and_nobody_elses(store):
    ten = key(10)  # rope x1 (10 % 3), alibi x1 (10 % 5 == 0)
    store.save_draft(ten, "decode", "# my decode draft\n", saved_by="tab")
    store.save_draft(key(11), "decode", "# someone else's draft\n", saved_by="tab")
    archive = zipfile.ZipFile(io.BytesIO(store.student_work_zip(ten)))
    rope_at, alibi_at = seeded_times(10)["rope"][0], seeded_times(10)["alibi"][0]
    assert sorted(archive.namelist()) == sorted(
        [
            f"{ten}/rope/attempt-1-{rope_at:%Y%m%dT%H%M%SZ}/rope.py",
            f"{ten}/alibi/attempt-1-{alibi_at:%Y%m%dT%H%M%SZ}/alibi.py",
            f"{ten}/decode/draft/decode.py",
            "index.csv",
        ]
    )
    assert archive.read(f"{ten}/decode/draft/decode.py").decode() == "# my decode draft\n"
    assert archive.read(f"{ten}/rope/attempt-1-{rope_at:%Y%m%dT%H%M%SZ}/rope.py").decode() == code_of(10, "rope", 1)
    rows = list(csv.DictReader(io.StringIO(archive.read("index.csv").decode())))
    assert {row["student"] for row in rows} == {ten} and [row["attempt"] for row in rows][-1] == "draft"
