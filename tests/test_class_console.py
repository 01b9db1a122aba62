"""The Instructor console's library: the class table from the roster (poslab.class_roll) and its
total (poslab.grade_totals), pass rates counted by student (poslab.pass_by_student, through
grader.gradebook.graded_run), one student's attempts and their diffs (poslab.student_record), and
the pass that keeps the page unlocked (poslab.instructor_pass). Every expected number is counted by hand."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from grader.gradebook import graded_run
from poslab.class_roll import ROSTER_FLAG, class_roll, filtered, roll_csv
from poslab.instructor_pass import sign, valid
from poslab.pass_by_student import pass_rates_by_student
from poslab.roster import read_roster
from poslab.store import Attempt, Store
from poslab.store.attempts import AttemptToRecord
from poslab.student_record import attempt_changes, attempts_table
from tests.console_seed import CLASS_SIZE, key, roster_csv, seed_class

MAXIMA = {"rope": 12.0, "alibi": 6.0}


@pytest.fixture
def store(tmp_path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'class.db'}")
    seed_class(store)
    store.record_attempt("ghost@uni.edu", "alibi", 1, 2)  # seen in the app, not on the roster
    return store


def roll(store: Store) -> pd.DataFrame:
    return class_roll(store.class_progress(), store.roster_members(), MAXIMA)


def test_every_rostered_student_has_a_row_with_zeros_and_the_unrostered_one_is_flagged(store):
    table = roll(store)
    assert len(table) == CLASS_SIZE + 1
    assert list(table["key"][:3]) == [key(1), key(2), key(3)] and table["key"].iloc[-1] == "ghost@uni.edu"
    assert list(table["name"][:2]) == ["Student 01", "Student 02"] and list(table["section"][:2]) == ["A", "B"]
    by_key = table.set_index("key")
    # By hand: rope is worth 12 and alibi 6; s01 and s05 reached 4/4 in rope, s02 and s03 2/4, s06 2/2 in alibi.
    assert by_key.loc[key(1), "rope"] == 12.0 and by_key.loc[key(1), "total"] == 12.0
    assert by_key.loc[key(2), "total"] == 6.0 and by_key.loc[key(3), "total"] == 6.0
    assert by_key.loc[key(4), "total"] == 0.0 and by_key.loc[key(6), "total"] == 6.0
    assert by_key.loc["ghost@uni.edu", "alibi"] == 3.0 and by_key.loc["ghost@uni.edu", "roster"] == ROSTER_FLAG
    assert (by_key.loc[key(40), ["rope", "alibi", "total"]] == 0).all() and set(by_key["max"]) == {18.0}
    assert by_key.loc[key(40), "roster"] == "" and by_key.loc[key(40), "status"] == "not started"
    assert by_key.loc[key(7), "status"] == "in progress"  # visited a lesson, handed nothing in
    assert (table["status"] == "not started").sum() == CLASS_SIZE - 7


def test_without_a_roster_every_student_seen_is_listed_and_none_is_flagged(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'open.db'}")
    store.record_visit("Ann", "rope")
    store.record_attempt("Bob", "rope", 1, 2)
    table = class_roll(store.class_progress(), (), MAXIMA)
    assert list(table["key"]) == ["Ann", "Bob"] and set(table["roster"]) == {""}
    assert list(table["total"]) == [0.0, 6.0]


def test_filters_and_sorts_by_section_exercise_and_status(store):
    table = roll(store)
    section_a = filtered(table, section="A")
    assert len(section_a) == CLASS_SIZE // 2 and set(section_a["section"]) == {"A"}
    done_in_rope = filtered(table, exercise="rope", status="done")
    assert list(done_in_rope["key"]) == [key(1), key(5)]
    in_progress_in_rope = filtered(table, exercise="rope", status="in progress")
    assert list(in_progress_in_rope["key"]) == [key(2), key(3), key(4)]  # s04: graded 0, below full marks
    by_total = filtered(table, sort_by="total")
    assert list(by_total["total"][:2]) == [12.0, 12.0] and by_total["total"].iloc[-1] == 0.0
    by_rope = filtered(table, exercise="rope", sort_by="rope")
    assert set(by_rope["key"][:2]) == {key(1), key(5)}
    assert filtered(table, status="late").empty  # no assignments, no due dates: nobody is late yet


def test_the_csv_has_one_row_per_student_and_the_shown_columns(store):
    text = roll_csv(roll(store))
    again = pd.read_csv(io.StringIO(text))
    assert len(again) == CLASS_SIZE + 1
    assert list(again.columns[:5]) == ["name", "section", "key", "roster", "status"]
    assert {"rope", "alibi", "total", "max"} <= set(again.columns)
    assert not any(column.startswith("grade:") for column in again.columns)
    assert again.set_index("key").loc[key(1), "total"] == 12.0


def test_pass_rates_count_each_student_once_and_leave_out_what_defines_nothing(store):
    runs = [graded_run(attempt) for attempt in store.graded_submissions()]
    assert [run.defined for run in runs if run.student == key(4)] == [False]  # the stub as given
    table = pass_rates_by_student(runs).set_index(["exercise", "family"])
    # Counted by hand (tests/console_seed.py): in rope, s01, s02, s03 and s05 count; s04 handed in
    # only the stub. Best attempts: s01 both, s02 norm, s03 norm, s05 both (its first, better than
    # its second). First attempts that define something: s01 neither, s02 norm, s03 norm (its
    # second: its first was the stub), s05 both.
    assert table.loc[("rope", "norm"), ["students", "best_passed", "first_passed"]].tolist() == [4, 4, 3]
    assert table.loc[("rope", "relative"), ["students", "best_passed", "first_passed"]].tolist() == [4, 2, 1]
    assert table.loc[("rope", "relative"), "best_rate"] == 0.5 and table.loc[("rope", "norm"), "first_rate"] == 0.75
    assert table.loc[("alibi", "slopes"), ["students", "best_passed", "first_passed"]].tolist() == [1, 1, 1]
    assert pass_rates_by_student(runs)["family"].iloc[0] == "relative"  # the most failed first
    by_attempt = store.per_test_pass_rates("rope").set_index("test")
    assert by_attempt.loc["rope: norm", "n"] == 8  # what the page used to show: attempts, stubs included


def test_an_attempt_whose_file_did_not_import_defines_nothing():
    stub = Attempt(1, "a", "rope", datetime.now(UTC), 0, 2, False, {"tests": [{"status": "did_not_import"}]}, None)
    assert graded_run(stub).defined is False and graded_run(stub).families == {}


def test_each_attempt_carries_the_changes_since_the_one_before_at_the_same_exercise(store):
    changes = attempt_changes(store.attempt_details(key(1)))
    assert [change.number for change in changes] == [1, 2] and changes[0].diff == ""
    assert "-    return x\n" in changes[1].diff and "+    return rotate(x)\n" in changes[1].diff
    assert changes[1].changed_lines == 2
    table = attempts_table(changes)
    assert list(table["attempt"]) == [2, 1] and table["lines changed"].iloc[0] == 2  # newest first


def test_a_regrade_sits_beside_the_submission_it_replaced_with_the_same_number(store):
    (first, second) = store.attempt_details(key(1))
    again = AttemptToRecord("rope", 12.0, 12.0, {}, second.code, public_tests_only=False)
    regrade_id = store.record_regrade(second.id, again, actor="prof@uni.edu")
    changes = attempt_changes(store.attempt_history(key(1)))
    assert [(change.attempt.id, change.number) for change in changes] == [
        (first.id, 1),
        (second.id, 2),
        (regrade_id, 2),
    ]
    assert changes[2].diff == "" and changes[2].changed_lines == 0
    table = attempts_table(changes)
    assert list(table["regrade"]) == ["regrade", "replaced by a regrade (score kept as history)", ""]
    assert list(table["score"])[:2] == [12.0, second.score]  # the old score kept beside the new


def test_a_pass_is_signed_with_the_password_expires_and_cannot_be_forged():
    now = datetime.now(UTC)
    made = sign("pass", "secret", now)
    assert valid(made, "pass", "secret", now) and "secret" not in made
    assert not valid(made, "pass", "another password", now)  # a new password ends every pass
    assert not valid(made, "ticket", "secret", now)  # a pass is no ticket
    assert not valid(made, "pass", "secret", now + timedelta(hours=13))
    purpose, expiry, nonce, mac = made.split(".")
    assert not valid(f"{purpose}.{int(expiry) + 3600}.{nonce}.{mac}", "pass", "secret", now)  # a longer life
    assert not valid(f"pass.99999999999.{nonce}.{'0' * 64}", "pass", "secret", now)
    assert not valid(None, "pass", "secret", now) and not valid("x" * 300, "pass", "secret", now)
    ticket = sign("ticket", "secret", now)
    assert valid(ticket, "ticket", "secret", now) and not valid(ticket, "ticket", "secret", now + timedelta(minutes=2))


def test_a_roster_with_nobody_active_yet_gives_every_student_zeros(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'new.db'}")
    store.replace_roster(read_roster(roster_csv()).students)
    table = class_roll(store.class_progress(), store.roster_members(), MAXIMA)
    assert len(table) == CLASS_SIZE and set(table["total"]) == {0.0} and set(table["status"]) == {"not started"}
