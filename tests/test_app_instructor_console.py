"""The Instructor console in AppTest with a roster of 40 (tests/console_seed.py): the class table's
rows, totals and CSV; one student's page reached by its address, and refused without the password;
pass rates by student; re-issuing every link; and the unlock lasting across a reload through the
pass cookie (given by the app's real route, read back as a browser would send it)."""

from __future__ import annotations

import csv
import io
import re

import pandas as pd
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from app_pages.ui.instructor import pass_cookie
from app_pages.ui.instructor.pass_routes import pass_routes
from grader.lms.grades import suite_maxima
from poslab.class_roll import class_roll, roll_csv
from poslab.instructor_pass import PASS_COOKIE
from poslab.store import Store
from tests.app_harness import button, go, open_app
from tests.console_seed import CLASS_SIZE, key, seed_class

PASSWORD = "correct horse"
PAGE = "app_pages/instructor.py"


@pytest.fixture
def seeded(app_env, monkeypatch) -> Store:
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    store = Store(app_env)
    seed_class(store)
    return store


def unlocked(student_key: str | None = None):
    at = open_app()
    if student_key is not None:
        at.query_params["student_key"] = student_key
    go(at, PAGE)
    at.main.text_input[0].input(PASSWORD)
    button(at, "Unlock").click().run()
    assert not at.exception and not at.error, [box.value for box in at.error]
    return at


def labels(at) -> list[str]:
    return [item.label for item in at.main.text_input]


def class_table(at) -> pd.DataFrame:
    return next(
        frame.value for frame in at.dataframe if "status" in frame.value.columns and "open" in frame.value.columns
    )


def test_the_class_table_lists_all_40_with_their_totals_and_its_csv_has_40_rows(seeded):
    at = unlocked()
    table = class_table(at)
    assert len(table) == CLASS_SIZE and list(table["key"][:2]) == [key(1), key(2)]
    rope, alibi = suite_maxima()["rope"], suite_maxima()["alibi"]
    totals = dict(zip(table["key"], table["total"]))
    # By hand: s01 and s05 full marks in rope, s02 and s03 half, s06 full marks in alibi, the rest nothing.
    assert totals[key(1)] == pytest.approx(rope) and totals[key(2)] == pytest.approx(rope / 2)
    assert totals[key(6)] == pytest.approx(alibi) and totals[key(40)] == 0
    assert sum(totals.values()) == pytest.approx(3 * rope + alibi)
    assert table.set_index("key").loc[key(3), "open"] == f"instructor?student_key={key(3)}"
    assert "Download the class table (CSV)" in [item.proto.label for item in at.get("download_button")]
    rows = list(csv.DictReader(io.StringIO(_csv_of(seeded))))  # the file itself: tests/browser downloads it
    assert len(rows) == CLASS_SIZE and float(rows[0]["total"]) == pytest.approx(rope)

    at.selectbox(key="class-section").set_value("B").run()
    at.selectbox(key="class-exercise").set_value("rope").run()
    at.selectbox(key="class-status").set_value("in progress").run()
    assert list(class_table(at)["key"]) == [key(2), key(4)]  # even numbers are section B; s04 graded 0
    assert any("2 of 40 students" in caption.value for caption in at.caption)


def _csv_of(store: Store) -> str:
    """The class table's CSV as the download button is given it."""
    return roll_csv(class_roll(store.class_progress(), store.roster_members(), suite_maxima()))


def test_one_students_page_opens_by_its_address_and_shows_attempts_diffs_and_drafts(seeded):
    seeded.save_draft(key(1), "rope", "def apply_rope(x):\n    pass  # draft\n", saved_by="tab-1")
    at = unlocked(key(1))
    assert at.header[0].value.replace("\\", "") == f"Student 01 ({key(1)})"  # escaped: never Markdown
    attempts = next(frame.value for frame in at.dataframe if "lines changed" in frame.value.columns)
    assert list(attempts["attempt"]) == [2, 1] and list(attempts["score"]) == [4.0, 0.0]
    shown = [block.value for block in at.code]
    assert any("return rotate(x)" in text for text in shown)  # the newest attempt's code
    assert any(text.startswith("--- attempt 1") and "+    return rotate(x)" in text for text in shown)
    assert any("pass  # draft" in text for text in shown)
    assert any("late marks and extensions come with assignments" in caption.value for caption in at.caption)
    button(at, "Back to the class").click().run()
    assert "student_key" not in at.query_params and len(class_table(at)) == CLASS_SIZE


def test_one_students_page_lists_a_regrade_beside_the_submission_it_replaced(seeded):
    from poslab.store.attempts import AttemptToRecord

    newest = seeded.attempt_details(key(1))[-1]
    again = AttemptToRecord("rope", 9.0, 12.0, {}, newest.code, public_tests_only=False)
    seeded.record_regrade(newest.id, again, actor="prof@uni.edu")
    at = unlocked(key(1))
    assert not at.exception, at.exception
    attempts = next(frame.value for frame in at.dataframe if "regrade" in frame.value.columns)
    assert list(attempts["attempt"]) == [2, 2, 1] and list(attempts["score"]) == [9.0, 4.0, 0.0]
    assert list(attempts["regrade"])[:2] == ["regrade", "replaced by a regrade (score kept as history)"]
    assert any("regrade" in label for label in at.selectbox(key=f"student-attempt-{key(1)}").options)


def test_a_student_who_opens_the_address_gets_nothing(seeded):
    at = open_app()
    at.query_params["student_key"] = key(1)
    go(at, PAGE)
    assert not at.dataframe and not at.code and not at.header
    assert labels(at) == ["Instructor password"]


def test_pass_rates_are_counted_by_student(seeded):
    at = unlocked()
    rates = next(frame.value for frame in at.dataframe if "best_rate" in frame.value.columns)
    rates = rates.set_index(["exercise", "family"])
    # By hand (tests/console_seed.py): 4 students count in rope; 2 pass "relative" at their best, 1 at their first.
    assert rates.loc[("rope", "relative"), ["students", "best_passed", "first_passed"]].tolist() == [4, 2, 1]
    assert rates.loc[("rope", "norm"), ["students", "best_passed", "first_passed"]].tolist() == [4, 4, 3]


def test_re_issuing_every_link_is_one_confirmed_button(seeded):
    at = unlocked()
    button(at, f"Re-issue all {CLASS_SIZE} links").click().run()
    text, count = at.session_state["roster-new-links"]
    links = {row["key"]: row["link"] for row in csv.DictReader(io.StringIO(text))}
    assert count == CLASS_SIZE and set(links) == {key(n) for n in range(1, CLASS_SIZE + 1)}
    assert all(member.link_expires is not None for member in seeded.roster_members())
    labels = [item.proto.label for item in at.get("download_button")]
    assert f"Download the {CLASS_SIZE} new link(s) (CSV)" in labels


def test_the_unlock_lasts_across_a_reload_through_the_pass_cookie_and_lock_ends_it(seeded, monkeypatch):
    at = unlocked()
    script = next(item.proto.body for item in at.get("html") if "instructor-pass" in item.proto.body)
    ticket = re.search(r'body: "([^"]+)"', script).group(1)
    client = TestClient(Starlette(routes=pass_routes()), base_url="http://app.test")
    refused = client.post("/instructor-pass", content=ticket)  # no Origin: another site's request
    assert refused.status_code == 403 and PASS_COOKIE not in refused.cookies
    given = client.post("/instructor-pass", content=ticket, headers={"Origin": "http://app.test"})
    assert given.status_code == 200
    cookie = given.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age" not in cookie and PASSWORD not in cookie
    value = given.cookies[PASS_COOKIE]

    monkeypatch.setattr(pass_cookie, "pass_cookie", lambda: value)  # the browser sends it after a reload
    again = go(open_app(), PAGE)  # a new session: no password typed
    assert "Instructor password" not in labels(again) and len(class_table(again)) == CLASS_SIZE
    button(again, "Lock this page").click().run()
    assert labels(again) == ["Instructor password"]
    assert any("instructor-pass/end" in item.proto.body for item in again.get("html"))

    monkeypatch.setattr(pass_cookie, "pass_cookie", lambda: value[:-4] + "0000")  # forged
    forged = go(open_app(), PAGE)
    assert labels(forged) == ["Instructor password"] and not forged.dataframe
