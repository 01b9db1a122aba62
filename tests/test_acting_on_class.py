"""Acting on a class of 40 (tests/console_seed.py): a regrade after the suite changed (a stand-in
suite on the real judge path) keeps the old score in the history; an override needs a reason,
wins in the grades and is in the audit log; a TA is refused an override; every instructor action
is logged with its actor; revision 0008 upgrades a store at 0007 with every row kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from test_store_support import TEST_CATALOGUE, store_at_revision, store_url  # noqa: F401 (fixtures)

from grader import cli
from grader.cli.grading import grade_in_parallel
from grader.regrade import regrade
from grader.settings import GraderSettings
from poslab.assignments import Assignment
from poslab.course_grades import class_grades
from poslab.identity import Identity
from poslab.roles import PASSWORD_ACTOR, ActionRefused, Actor, Role, page_access
from poslab.roster import read_roster
from poslab.store import Store
from poslab.vocabulary import AttemptKind, AuditAction
from tests.console_seed import key, roster_csv, seed_class
from tests.grading_fixtures import on_the_warm_worker
from tests.hostile._support import ProbeSuite, reference_submission, require_bwrap

INSTRUCTOR, TA = Actor("prof@uni.edu", Role.INSTRUCTOR), Actor("tom@uni.edu", Role.TA)


@pytest.fixture
def seeded(app_env) -> Store:
    store = Store(app_env)
    seed_class(store)
    return store


def test_a_regrade_after_the_suite_changed_shows_the_change_and_keeps_the_old_score(seeded, warm_grader):
    require_bwrap()
    # Graded 1/2 by last week's suite; today's (the stand-in: its own test list) gives the reference 2/2.
    old_id = seeded.record_attempt(key(7), "rope", 1.0, 2.0, code=reference_submission())
    assert warm_grader.settings == GraderSettings.from_env()

    def grade_all(submissions, on_result):
        grade_in_parallel(submissions, 1, lambda: on_the_warm_worker(warm_grader, ProbeSuite), on_result)

    report = regrade(seeded, grade_all, student=key(7), actor=TA)  # a TA may regrade
    (change,) = report.changes
    assert (change.student, change.exercise, change.attempt_id) == (key(7), "rope", old_id)
    assert (change.old_score, change.old_max, change.new_score, change.new_max) == (1.0, 2.0, 2.0, 2.0)
    history = seeded.attempt_history(key(7), "rope")
    assert [(item.score, item.kind, item.regrade_of) for item in history] == [
        (1.0, AttemptKind.SUPERSEDED, None),  # the old score, kept
        (2.0, AttemptKind.SUBMISSION, old_id),
    ]
    assert history[0].time == history[1].time  # counted at its hand-in time, as the original was
    assert seeded.progress(key(7)).exercise("rope").best_score == 2.0
    assert len(seeded.attempt_details(key(1))) == 2  # nobody else was regraded
    logged = [(entry.actor, entry.role, entry.target) for entry in seeded.audit_entries()[:2]]
    assert logged == [(TA.name, "ta", key(7)), (TA.name, "ta", key(7))]  # the run, then the change


def test_the_regrade_command_names_what_it_regraded(seeded, app_env, monkeypatch, capsys):
    monkeypatch.setenv("POSLAB_DB_URL", app_env)
    assert cli.main(["regrade", "--student", key(40)]) == 0  # s40 handed nothing in: nothing to grade
    assert "0 attempt(s) regraded, 0 changed" in capsys.readouterr().out
    assert seeded.audit_entries()[0].action == AuditAction.REGRADE


def test_an_override_needs_a_reason_wins_in_the_grades_and_is_in_the_audit_log(seeded):
    for reason in ("", "   \n"):
        with pytest.raises(ValueError, match="needs a reason"):
            seeded.set_override(key(2), "rope", 3.0, 4.0, reason, actor=INSTRUCTOR)
    assert seeded.overrides() == ()
    seeded.set_override(key(2), "rope", 3.0, 4.0, "  regraded by hand:  the norm test was wrong ", actor=INSTRUCTOR)
    entry = seeded.audit_entries()[0]
    assert (entry.action, entry.actor, entry.target, entry.reason) == (
        AuditAction.OVERRIDE,
        INSTRUCTOR.name,
        key(2),
        "regraded by hand: the norm test was wrong",
    )
    rope = seeded.progress(key(2)).exercise("rope")
    assert (rope.best_score, rope.max_score, rope.overridden) == (3.0, 4.0, True)  # 2/4 by its attempt
    row = seeded.class_progress().set_index("student").loc[key(2)]
    assert row["grade:rope"] == 0.75 and row["overridden"] == "rope"
    assignment = Assignment("a1", "A1", {"rope": 10.0}, None)
    grades = class_grades(seeded.graded_submissions(), {}, assignment, None, seeded.override_fractions())
    assert grades[key(2)].total == 7.5 and grades[key(1)].total == 10.0
    assert "overridden" in grades[key(2)].summary()
    assert seeded.clear_override(key(2), "rope", actor=INSTRUCTOR) is True
    assert seeded.progress(key(2)).exercise("rope").best_score == 2.0  # the attempt counts again
    assert seeded.audit_entries()[0].action == AuditAction.CLEAR_OVERRIDE


def test_a_ta_is_refused_an_override_and_an_instructor_allowed(seeded):
    with pytest.raises(ActionRefused, match="only an instructor may override a score"):
        seeded.set_override(key(3), "rope", 4.0, 4.0, "a reason", actor=TA)
    with pytest.raises(ActionRefused):
        seeded.issue_links([key(3)], timedelta(days=1), actor=TA)
    assert seeded.overrides() == () and seeded.roster_members()[2].link_expires is None
    seeded.set_override(key(3), "rope", 4.0, 4.0, "a reason", actor=INSTRUCTOR)
    assert [item.set_by for item in seeded.overrides()] == [INSTRUCTOR.name]


def test_every_instructor_action_is_logged_with_its_actor(seeded):
    tokens = seeded.issue_links([key(1), key(2)], timedelta(days=1))  # called as before: an unnamed script
    assert set(tokens) == {key(1), key(2)}
    seeded.issue_links([key(1)], timedelta(days=1), actor=INSTRUCTOR)  # a re-issue
    seeded.revoke_links([key(2)], actor=INSTRUCTOR)
    seeded.end_sign_ins([key(1)], actor=INSTRUCTOR)
    seeded.replace_roster(read_roster(roster_csv()).students, actor=INSTRUCTOR)
    due = datetime(2026, 3, 1, tzinfo=UTC)
    seeded.grant_extension("a1", key(4), due, INSTRUCTOR)
    seeded.withdraw_extension("a1", key(4), actor=INSTRUCTOR)
    seeded.set_override(key(4), "rope", 1.0, 4.0, "late enrolment", actor=INSTRUCTOR)
    seeded.clear_override(key(4), "rope", actor=INSTRUCTOR)
    comment = seeded.add_comment(key(5), "rope", "spam")
    seeded.delete_comment(comment, actor=INSTRUCTOR)
    seeded.log_action(AuditAction.REGRADE, "the whole class", "0 attempt(s) regraded", actor=TA)
    seeded.record_export("the class's code", "40 students", actor=INSTRUCTOR)
    entries = seeded.audit_entries()
    assert {entry.action for entry in entries} == set(AuditAction)
    assert [entry.at for entry in entries] == sorted((entry.at for entry in entries), reverse=True)  # newest first
    by_action = {entry.action: entry for entry in reversed(entries)}  # the newest of each
    assert all(by_action[action].actor == INSTRUCTOR.name for action in set(AuditAction) - {AuditAction.REGRADE})
    assert by_action[AuditAction.REGRADE].role == "ta"
    assert by_action[AuditAction.DELETE_COMMENT].target == key(5)
    assert [entry.actor for entry in entries if entry.action == AuditAction.ISSUE_LINKS][-1] == "script"
    with pytest.raises(ActionRefused):
        seeded.record_export("the class's code", actor=TA)


def test_who_may_open_the_instructor_page():
    instructors, tas = frozenset({"prof@uni.edu"}), frozenset({"tom@uni.edu"})
    prof, tom, sam = (Identity(name, "roster") for name in ("prof@uni.edu", "tom@uni.edu", "sam@uni.edu"))
    assert page_access("roster", prof, instructors, tas, False).actor == Actor("prof@uni.edu", Role.INSTRUCTOR)
    assert page_access("login", tom, instructors, tas, False).actor == Actor("tom@uni.edu", Role.TA)
    locked = page_access("roster", sam, instructors, tas, True)  # named in neither: the password is no way in
    assert locked.actor is None and not locked.password and "neither an instructor nor a TA" in locked.locked
    assert page_access("roster", None, instructors, tas, False).password  # nobody signed in: the password
    assert page_access("name", Identity("prof@uni.edu", "name"), instructors, tas, False).password  # typed: anyone
    assert page_access("name", None, frozenset(), frozenset(), True).actor == Actor(PASSWORD_ACTOR, Role.INSTRUCTOR)


def test_a_store_at_revision_0007_upgrades_to_0008_and_keeps_every_row(store_url):
    old = store_at_revision(store_url, "0007").tables
    engine = sa.create_engine(store_url)
    at = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as conn:  # as revision 0007 left a database, with rows
        conn.execute(
            sa.insert(old["attempts"]).values(
                student="ann", exercise="rope", at=at, score=3.0, max_score=4.0, public_tests_only=False, code="x = 1\n"
            )
        )
        conn.execute(
            sa.insert(old["extensions"]).values(assignment="a1", student="ann", due=at, set_by="instructor", set_at=at)
        )
    engine.dispose()
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    (attempt,) = store.attempt_details("ann")
    assert (attempt.score, attempt.time, attempt.code, attempt.regrade_of) == (3.0, at, "x = 1\n", None)
    assert store.extensions("a1") == {"ann": at} and store.audit_entries() == () and store.overrides() == ()
    from poslab.store import AttemptToRecord

    again = store.record_regrade(attempt.id, AttemptToRecord("rope", 4.0, 4.0, None, "x = 1\n", False))
    assert [item.kind for item in store.attempt_history("ann")] == [AttemptKind.SUPERSEDED, AttemptKind.SUBMISSION]
    assert store.record_regrade(attempt.id, AttemptToRecord("rope", 4.0, 4.0, None, "x = 1\n", False)) is None
    assert store.attempt_details("ann")[0].regrade_of == attempt.id and again is not None
    store.set_override("ann", "rope", 1.0, 4.0, "checked by hand")
    assert store.progress("ann").exercise("rope").best_score == 1.0
    store.close()


def test_the_page_opens_by_role_a_ta_sees_no_override_and_an_instructor_sets_one_with_its_reason(seeded, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.app_harness import APP, TIMEOUT, browser_signed_in, go

    monkeypatch.setenv("POSLAB_INSTRUCTORS", key(1))
    monkeypatch.setenv("POSLAB_TAS", key(2))

    def page_of(student: str) -> AppTest:
        browser_signed_in(monkeypatch, seeded, student)
        return go(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), "app_pages/instructor.py")

    ta = page_of(key(2))
    headers = [header.value for header in ta.header]
    assert "Regrade" in headers and "Audit log" in headers and "Scores set by hand" not in headers
    assert "Grades back to the LMS" not in headers and not [form for form in ta.get("form")]
    assert any("As a TA you may view the class and regrade" in box.value for box in ta.info)

    prof = page_of(key(1))
    prof.selectbox(key="override-student").set_value(key(3))
    prof.selectbox(key="override-exercise").set_value("rope")
    prof.number_input(key="override-score").set_value(1.0)
    prof.text_input(key="override-reason").input("  ")
    prof.button(key="FormSubmitter:override-form-Set the score").click().run()
    assert any("needs a reason" in box.value for box in prof.warning) and seeded.overrides() == ()
    prof.text_input(key="override-reason").input("missed the deadline for a documented illness")
    prof.button(key="FormSubmitter:override-form-Set the score").click().run()
    assert [(item.student, item.set_by) for item in seeded.overrides()] == [(key(3), key(1))]
    log = next(
        frame.value for frame in prof.dataframe if "reason" in frame.value.columns and "who" in frame.value.columns
    )
    assert log.iloc[0]["reason"] == "missed the deadline for a documented illness"
    assert log.iloc[0]["who"] == f"{key(1)} (instructor)"
