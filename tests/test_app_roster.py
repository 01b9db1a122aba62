"""Roster mode through the whole app (AppTest): reading needs no sign-in, saving does; typed names
and ``?student=`` are refused with a sentence; a signed-in student's work is stored under their key;
a sign-out and a withdrawn link end the sign-in; the Instructor page imports a roster and hands out,
re-issues and withdraws links (the CSV's links work, the earlier ones stop).

AppTest sends no cookies: ``browser_signed_in`` issues and uses a real link in the store and has the
frame's cookie reader answer with that sign-in's id. The real route and cookie are driven by
``tests/test_signin_server.py`` and in Chromium by ``tests/browser/test_class_attacks.py``.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest

from poslab.lessons import get_lesson
from poslab.roster import read_roster
from poslab.store import Store
from tests.app_harness import browser_signed_in, button, go, open_app, texts

PASSWORD = "correct horse"
ROSTER_CSV = b"name,email,section\nAda Lovelace,ada@uni.edu,A\nBob Babbage,bob@uni.edu,B\n"
ADA, BOB = "ada@uni.edu", "bob@uni.edu"
LESSON = "position-problem"
PAGES = ["app_pages/home.py", get_lesson(LESSON).page_path, "app_pages/exercise.py", "app_pages/progress.py"]
HOW = "Open the personal sign-in link your instructor sent you"
DAY = timedelta(days=1)


@pytest.fixture
def roster(app_env) -> Store:
    store = Store(app_env)
    store.replace_roster(read_roster(ROSTER_CSV).students)
    return store


def shown(at) -> str:
    return " ".join(str(item.value) for item in [*at.caption, *at.info, *at.warning, *at.markdown, *at.text])


def test_every_page_renders_without_a_sign_in_and_says_how_to_sign_in_where_saving_would_be(roster, app_env):
    at = open_app()
    assert not at.sidebar.text_input  # no name form
    assert any(HOW in box.value and "Reading the lessons needs no sign-in" in box.value for box in at.sidebar.info)
    for page in PAGES:
        go(at, page)
        assert not at.exception
    go(at, get_lesson(LESSON).page_path)
    assert at.title[0].value == get_lesson(LESSON).title and at.get("vega_lite_chart")  # the lesson is readable
    assert f"{HOW} to save your progress through this lesson." in shown(at)
    assert f"{HOW} to comment." in shown(at) and not [b for b in at.button if b.label in ("Post", "Mark lesson done")]
    go(at, "app_pages/exercise.py")
    assert f"{HOW} to write and submit your code" in shown(at) and not at.get("component_instance")
    go(at, "app_pages/progress.py")
    assert f"{HOW} to see your progress." in shown(at) and not at.metric
    assert Store(app_env).students() == ()  # not even a visit


@pytest.mark.parametrize("how", ["url", "typed"])
def test_a_typed_name_or_student_in_the_address_is_refused_with_how_to_sign_in(roster, app_env, how):
    at = open_app(student=ADA if how == "url" else None)
    if how == "typed":  # a name left in the session from before the roster (no form is shown now)
        at.session_state["student_name"] = ADA
        at.run()
    refusal = [box.value for box in at.sidebar.warning]
    assert len(refusal) == 1 and "not accepted" in refusal[0] and "sign-in link your instructor sent you" in refusal[0]
    assert "student" not in at.query_params  # taken out of the address
    go(at, get_lesson(LESSON).page_path)
    assert not [b for b in at.button if b.label == "Mark lesson done"]
    assert Store(app_env).students() == ()


def test_a_signed_in_student_saves_under_their_key_and_a_sign_out_ends_it(roster, app_env, monkeypatch):
    session = browser_signed_in(monkeypatch, roster, ADA)
    at = open_app(student=BOB)  # ?student=bob: refused, Ada stays Ada
    assert "Signed in as Ada Lovelace (ada@uni.edu)" in texts(at.sidebar)
    assert any("not accepted" in box.value for box in at.sidebar.warning)
    go(at, get_lesson(LESSON).page_path)
    check = get_lesson(LESSON).checks[0]
    at.radio(key=f"qc-choice-{LESSON}-{check.id}").set_value(check.correct_index).run()
    at.button(key=f"qc-reveal-{LESSON}-{check.id}").click().run()
    at.text_area(key=f"comment-text-{LESSON}").set_value("Why a sine?")
    button(at, "Post").click().run()
    store = Store(app_env)
    assert store.students() == (ADA,)
    assert store.progress(ADA).lesson(LESSON).checks_right == (check.id,)
    assert [(c.student, c.text) for c in store.comments(LESSON)] == [(ADA, "Why a sine?")]

    button(at.sidebar, "Sign out").click().run()
    assert store.sign_in_state(session).student is None  # ended in the store: every process sees it
    assert any(HOW in box.value for box in at.sidebar.info) and not at.sidebar.get("progress")
    assert not [b for b in at.button if b.label == "Post"]


def test_a_withdrawn_link_ends_the_sign_in_at_the_next_run(roster, app_env, monkeypatch):
    browser_signed_in(monkeypatch, roster, BOB)
    at = open_app()
    assert "Signed in as Bob Babbage (bob@uni.edu)" in texts(at.sidebar)
    roster.revoke_links([BOB])
    go(at, get_lesson(LESSON).page_path)
    assert "Signed in as Bob Babbage (bob@uni.edu)" not in texts(at.sidebar)
    assert Store(app_env).students() == ()


def unlocked_instructor(monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    at = go(open_app(), "app_pages/instructor.py")
    at.main.text_input[0].input(PASSWORD)
    button(at, "Unlock").click().run()
    assert not at.exception and not at.error, [box.value for box in at.error]
    return at


def links_of(at) -> dict[str, str]:
    """The new links' CSV, as the download button offers it (kept in the session until replaced)."""
    text, _count = at.session_state["roster-new-links"]
    return {row["key"]: row["link"] for row in csv.DictReader(io.StringIO(text))}


def test_the_instructor_imports_a_roster_and_issues_reissues_and_withdraws_links(app_env, monkeypatch):
    at = unlocked_instructor(monkeypatch)
    assert any("No roster" in item.value for item in at.caption)
    at.file_uploader(key="roster-file").set_value(("class.csv", ROSTER_CSV, "text/csv")).run()
    button(at, "Make these 2 students the class's roster (plain file)").click().run()
    assert any("2 new" in box.value for box in at.success)
    store = Store(app_env)
    assert [member.key for member in store.roster_members()] == [ADA, BOB]
    table = next(frame.value for frame in at.dataframe if "link valid until (UTC)" in frame.value.columns)
    assert list(table["link valid until (UTC)"]) == ["no link", "no link"]

    button(at, "New links for the 2 without one").click().run()
    assert any("2 new link(s)" in box.value and "cannot be shown again" in box.value for box in at.success)
    assert "Download the 2 new link(s) (CSV)" in [item.proto.label for item in at.get("download_button")]
    first = links_of(at)
    assert set(first) == {ADA, BOB} and all(link.startswith("http://localhost:8501/signin/") for link in first.values())
    assert all(member.link_expires is not None for member in store.roster_members())
    token = first[ADA].rsplit("/", 1)[1]
    assert store.sign_in_with_link(token, DAY).student == ADA  # the link in the CSV works

    at.multiselect(key="roster-chosen").set_value([ADA]).run()
    button(at, "New links for the chosen").click().run()
    again = links_of(at)
    assert set(again) == {ADA} and again[ADA] != first[ADA]
    assert store.sign_in_with_link(token, DAY) == "revoked"  # re-issued: the earlier link stops working

    at.multiselect(key="roster-chosen").set_value([BOB]).run()
    button(at, "Withdraw the chosen's links").click().run()
    assert any("Withdrew 1 live link(s) of 1 student(s)" in box.value for box in at.success)
    assert store.sign_in_with_link(first[BOB].rsplit("/", 1)[1], DAY) == "revoked"

    at.button(key="roster-remove").click().run()
    assert store.roster_members() == () and not store.sign_in_state().roster_active
