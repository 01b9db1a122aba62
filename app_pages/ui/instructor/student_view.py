"""One student, as the Instructor page opens them at ``/instructor?student_key=...`` (behind the
same lock as the page): their attempts (time, score, code, feedback, the changes since the one
before), their drafts, their lessons, and their late marks and extensions (once assignments exist).
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui import clock
from app_pages.ui.instructor.class_table import STUDENT_PARAM, student_address
from app_pages.ui.store_calls import store_call
from poslab.exercises import EXERCISES
from poslab.lessons import all_lessons
from poslab.store import RosterMember, StudentProgress
from poslab.student_record import AttemptChange, attempt_changes, attempts_table, regrade_note, tests_table
from poslab.viz.progress import lesson_rows


def _plain(text: str) -> str:
    """A roster's name and key as text, never Markdown (nor an email link)."""
    return "".join("\\" + char if char in "\\`*_{}[]()<>#+-.!|~@:" else char for char in text)


def _back() -> None:
    st.query_params.pop(STUDENT_PARAM, None)


def _heading(key: str, member: RosterMember | None, seen: bool) -> None:
    st.button("Back to the class", icon=":material/arrow_back:", on_click=_back)
    name = member.name if member is not None else key
    st.header(_plain(name if name == key else f"{name} ({key})"))
    facts = [f"section {member.section}" if member is not None and member.section else "no section"]
    if member is None:
        facts.append("not on the roster" if seen else "not on the roster, and nothing stored")
    st.caption(" · ".join(facts) + f" · this page's address: `{student_address(key)}` (it asks for the password too)")


def _attempt(change: AttemptChange) -> None:
    attempt = change.attempt
    st.markdown(
        f"**{attempt.exercise}, attempt {change.number}** · {clock.shown(attempt.time, clock.DATE_TIME)} · "
        f"{attempt.score:g} / {attempt.max_score:g} points"
        + (" · public tests only (feedback, not a grade)" if attempt.public_tests_only else "")
        + (f" · {regrade_note(attempt)}" if regrade_note(attempt) else "")
    )
    code, results, changes = st.tabs(["Code", "Feedback", "Changes since the attempt before"])
    code.code(attempt.code or "(no code kept)", language="python", line_numbers=True)
    tests = tests_table(attempt.details)
    if tests.empty:
        results.caption("The grader's details were not kept for this attempt.")
    else:
        results.dataframe(tests, hide_index=True)
    if attempt.regrade_of is not None:
        changes.caption("A regrade: the same code as the submission it replaced, graded again.")
    elif change.number == 1:
        changes.caption("Their first attempt at this exercise.")
    elif not change.diff:
        changes.caption("The same code as the attempt before.")
    else:
        changes.code(change.diff, language="diff")


def _attempts(key: str) -> None:
    st.subheader("Attempts")
    found = store_call("load the student's attempts", lambda store: store.attempt_history(key), None)
    if found is None:
        return
    if not found:
        st.caption("No attempt handed in.")
        return
    changes = attempt_changes(found)
    table = attempts_table(changes)
    st.dataframe(
        table.drop(columns="id"),
        hide_index=True,
        column_config={"time": st.column_config.DatetimeColumn("time", format="YYYY-MM-DD HH:mm:ss", timezone="UTC")},
    )
    labels = {
        row.id: f"{row.exercise}, attempt {row.attempt} ({row.score:g}/{row['max']:g})"
        + (f" · {row.regrade}" if row.regrade else "")
        for _, row in table.iterrows()
    }
    chosen = st.selectbox("Open an attempt", list(labels), format_func=labels.get, key=f"student-attempt-{key}")
    _attempt(next(change for change in changes if change.attempt.id == chosen))


def _drafts(key: str) -> None:
    st.subheader("Drafts")
    drafts = store_call("load the student's drafts", lambda store: store.drafts(key), None)
    if drafts is None:
        return
    if not drafts:
        st.caption("No draft saved.")
    for draft in drafts:
        with st.expander(
            f"{draft.exercise} · saved {clock.shown(draft.saved_at, clock.DATE_TIME)} (revision {draft.revision})"
        ):
            st.code(draft.code, language="python", line_numbers=True)


def _lessons(progress: StudentProgress) -> None:
    st.subheader("Lessons")
    rows = lesson_rows(progress, all_lessons())
    st.caption(f"{progress.lessons_done} of {len(rows)} lessons done · {progress.percent:.1f} % overall")
    st.dataframe(rows[["title", "status"]], hide_index=True)


def show_student(key: str, member: RosterMember | None) -> None:
    progress = store_call("load the student's progress", lambda store: store.progress(key), None)
    _heading(key, member, progress is not None and progress.last_active is not None)
    _attempts(key)
    _drafts(key)
    if progress is not None:
        _lessons(progress)
    st.subheader("Late marks and extensions")
    st.caption(
        "None yet: late marks and extensions come with assignments and their due dates "
        f"(the {len(EXERCISES)} exercises have none so far)."
    )
