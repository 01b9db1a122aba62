"""One student cannot reach another's data, in each identity mode (typed name, login, roster).

Student B has something of every kind in the store: visits, a lesson done, a quick-check answer, a
hint, a draft, a graded attempt with its code, a practice run, a submission still queued and a
comment. Student A, signed in each way, opens every page with B's identity in the address
(``?student=``) and looks at everything drawn (every element's content, the editor's text
included): nothing of B's may be shown except B's comment, which the class reads and only B and
the instructor may delete; A's actions land under A. Within one browser session, when the student
changes (a name changed, another account), nothing of the one before is shown to the next.

The places an identity or an id is read, and the test that covers each:

* the identity: ``?student=``, the typed name, ``st.user``, the sign-in cookie -> ``test_b_is_out_of_reach``
  (all three modes) and ``tests/test_app_roster.py``;
* the draft (``workspace-<student>-<exercise>``, the editor, its download: the same text) -> the editor's text here;
* attempt ids (``attempt-open-<id>``, ``load-attempt-<id>``) and the history -> the attempts count and code;
* practice runs -> the practice result here; job ids (``grading_job``, ``practice_runs``) and the
  pending submission -> "being graded" here, and ``test_a_changed_student_sees_nothing_of_the_one_before``;
* comment ids (``delete-comment-<id>``) -> no Delete on B's comment here, and the store refuses a
  delete by anyone but the author (``tests/test_store_signin.py``);
* quick-check answers (``qc-choice-...``), hints revealed, lessons done, the Progress page and Home's
  glance -> here.
"""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from grader.results import SubmissionResult, TestOutcome
from grader.service import GradingService
from poslab.exercises import hints as exercise_hints
from poslab.lessons import get_lesson
from poslab.roster import read_roster
from poslab.store import Store
from poslab.store.jobs import AttemptToRecord
from tests.app_harness import APP, TIMEOUT, browser_signed_in, button, go, open_app, sign_in, texts

A, B = "ann@uni.edu", "bob@uni.edu"


def verified_login(email: str) -> dict[str, object]:
    """What st.user holds for an account whose provider verified its email."""
    return {
        "is_logged_in": True,
        "iss": "https://id.uni.edu",
        "sub": email.split("@")[0],
        "email": email,
        "email_verified": True,
    }


LESSON = "position-problem"
SECRETS = ("b_secret_draft", "b_secret_attempt", "b_secret_practice")
WAITING = re.compile("Starting the grader|In the queue|being graded")  # what a watched submission says
PAGES = ["app_pages/home.py", get_lesson(LESSON).page_path, "app_pages/exercise.py", "app_pages/progress.py"]


def give_b_one_of_everything(store: Store) -> int:
    """B's work of every kind; the id of B's comment."""
    check = get_lesson(LESSON).checks[0]
    store.record_visit(B, LESSON)
    store.complete_lesson(B, LESSON)
    store.record_check(B, LESSON, check.id, True)
    store.record_check_choice(B, LESSON, check.id, check.correct_index)
    store.record_hint(B, "rope", 1)
    store.save_draft(B, "rope", "b_secret_draft = 1\n", saved_by="b-tab")
    store.record_attempt(B, "rope", 20, 20, details=None, code="b_secret_attempt = 1\n")
    practice = SubmissionResult(
        submission_id="b",
        status="graded",
        isolation="fallback",
        public_tests_only=True,
        submission_hash="h",
        suite_hash="x",
        grader_version="0",
        execution_time=0.1,
        tests=(
            TestOutcome("exercises/test_rope.py::test_norm", "rope", 0, 1, "failed", "b_secret_practice", "visible"),
        ),
    )
    store.record_practice_runs(B, [AttemptToRecord("rope", 0, 1, practice.to_dict(), "b_secret_practice = 1\n", True)])
    store.add_grading_job("b-job", B, {"rope.py": "b_secret_attempt = 2\n"}, ["rope"], "hidden", "elsewhere", 600)
    return store.add_comment(B, LESSON, "B's question")


def revealed(at) -> list[str]:
    """The quick checks' answers drawn: "Right. ..." or "Not quite. ..."."""
    return [box.value for box in [*at.success, *at.error] if box.value.startswith(("Right. ", "Not quite. "))]


def drawn(at) -> str:
    """Everything the run drew: every element's message, the editor's arguments included."""
    found = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(found)


@pytest.fixture(params=["name", "login", "roster"])
def as_a(request, app_env, monkeypatch):
    """A fresh session of A's, signed in the mode's way, with ``?student=`` naming B."""
    store = Store(app_env)
    if request.param == "roster":
        store.replace_roster(read_roster(f"name,email\nAnn,{A}\nBob,{B}\n".encode()).students)
        browser_signed_in(monkeypatch, store, A)

    def open_session():
        if request.param == "name":
            at = sign_in(open_app(), A)
            at.query_params["student"] = B  # A's session, B's name edited into the address
            return at.run()
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        if request.param == "login":
            at.user = verified_login(A)
        at.query_params["student"] = B
        return at.run()

    return request.param, open_session


def test_b_is_out_of_reach(as_a, app_env):
    mode, open_session = as_a
    comment = give_b_one_of_everything(Store(app_env))
    at = open_session()
    assert A in " ".join(texts(at.sidebar)) and B not in " ".join(texts(at.sidebar))
    for page in PAGES:
        at.query_params["student"] = B  # on every page, as an attacker would keep it in the address
        go(at, page)
        everything = drawn(at)
        assert not [secret for secret in SECRETS if secret in everything], (mode, page)
        assert not WAITING.search(everything) and "Course progress: 0%" in " ".join(
            bar.proto.text for bar in at.sidebar.get("progress")
        ), (mode, page)
    go(at, "app_pages/exercise.py")
    editor = json.loads(at.get("component_instance")[0].proto.json_args)["code"]
    assert "b_secret" not in editor and any(header.value == "Your attempts (0)" for header in at.header)
    assert not any("Hint 1 of" in item.value for item in at.markdown)
    go(at, "app_pages/progress.py")
    assert at.metric[0].value == "0%"
    go(at, get_lesson(LESSON).page_path)
    check = get_lesson(LESSON).checks[0]
    assert at.radio(key=f"qc-choice-{LESSON}-{check.id}").value is None  # B's stored answer is not A's
    assert "B's question" in texts(at.main)  # the class reads comments ...
    assert not [b for b in at.button if b.key == f"delete-comment-{comment}"]  # ... only B deletes B's
    button(at, "Mark lesson done").click().run()
    store = Store(app_env)
    assert store.progress(A).lesson(LESSON).marked_done and set(store.students()) == {A, B}
    assert store.draft(B, "rope").code == "b_secret_draft = 1\n" and len(store.comments(LESSON)) == 1


def test_a_changed_student_sees_nothing_of_the_one_before_typed_names(app_env, monkeypatch):
    # A look at a queued submission starts the service; the page's sentence needs no judge, and
    # starting them here (a Dask cluster, two judges importing torch) cost more than the whole test.
    monkeypatch.setattr(GradingService, "start", lambda self: self)
    Store(app_env).add_grading_job("ann-job", "Ann", {"rope.py": "x = 1\n"}, ["rope"], "hidden", "elsewhere", 600)
    at = go(sign_in(open_app(), "Ann"), get_lesson(LESSON).page_path)
    check = get_lesson(LESSON).checks[0]
    at.radio(key=f"qc-choice-{LESSON}-{check.id}").set_value(check.correct_index).run()
    at.button(key=f"qc-reveal-{LESSON}-{check.id}").click().run()
    assert revealed(at)
    at.query_params["exercise"] = "rope"  # Ann's submission is of rope: its page shows it
    go(at, "app_pages/exercise.py")
    button(at, f"Show hint 1 of {len(exercise_hints('rope'))}").click().run()
    assert any("Hint 1 of" in item.value for item in at.markdown)
    assert WAITING.search(drawn(at))  # Ann's submission, watched by this session
    button(at.sidebar, "Change name").click().run()
    sign_in(at, "Bob")
    everything = drawn(at)
    assert not WAITING.search(everything) and "Hint 1 of" not in everything
    go(at, get_lesson(LESSON).page_path)
    assert at.radio(key=f"qc-choice-{LESSON}-{check.id}").value is None and not revealed(at)
    assert Store(app_env).progress("Bob").lesson(LESSON).checks_right == ()


def test_a_changed_account_sees_nothing_of_the_one_before_login(app_env):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.user = verified_login(A)
    go(at.run(), get_lesson(LESSON).page_path)
    check = get_lesson(LESSON).checks[0]
    at.radio(key=f"qc-choice-{LESSON}-{check.id}").set_value(check.correct_index).run()
    at.button(key=f"qc-reveal-{LESSON}-{check.id}").click().run()
    assert revealed(at)
    at.user = verified_login(B)  # another account in the same browser session
    at.run()
    assert "Signed in as bob@uni.edu" in texts(at.sidebar)
    assert at.radio(key=f"qc-choice-{LESSON}-{check.id}").value is None and not revealed(at)
