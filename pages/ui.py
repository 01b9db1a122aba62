"""The one module that draws with ``st.*`` for more than one page. Only pages and app.py import it.

Pages call ``lesson_header`` first and ``lesson_footer`` last; between them they ask the library
for data and charts and render them with ``chart`` and ``text``.

Progress: ``app.py`` draws ``sidebar()`` on every page (who is studying, overall progress);
``lesson_header`` stores the visit, quick-check answers are stored as they are revealed, and
``lesson_footer`` adds "mark lesson done" and the lesson's comments. Every store call goes
through ``store_call``, so a locked or missing database ends in a sentence, not a traceback.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import altair as alt
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from poslab.config import Settings
from poslab import grading_service
from poslab.exercises import EXERCISES, HINT_TIERS, Exercise
from poslab.exercises import hints as exercise_hints
from poslab.grading_service import GradingError, GradingGate, SubmissionRejected
from poslab.identity import NAME_PARAM, clean_name, login_configured, login_identity, resolve_identity
from poslab.lessons import Lesson, QuickCheck, all_lessons, get_lesson, lesson_text, neighbours
from poslab.store import Comment, Store, StoreError, StudentProgress
from poslab.store.validation import MAX_COMMENT_CHARS
from poslab.viz.progress import next_steps

CHECKS_KEY = "quick_checks"  # session_state[CHECKS_KEY][lesson_id][check_id] = {"choice": i, "correct": b}
STUDENT_KEY = "student_name"  # the typed name (without a login); mirrored in the URL as ?student=
VISITS_KEY = "visits_recorded"  # (student, lesson id) pairs whose visit this session already stored
INSTRUCTOR_KEY = "instructor_unlocked"  # True once the Instructor page's password was right
GRADED_KEY = "last_grading"  # {"exercises": [ids], "result": SubmissionResult} of this session's last grading
HINTS_KEY = "hints_shown"  # exercise id -> hints revealed this session (before a name is given)
T = TypeVar("T")


def text(lesson_id: str, key: str) -> None:
    """Render one Markdown block of the lesson's text file."""
    st.markdown(lesson_text(lesson_id, key))


def chart(altair_chart: alt.TopLevelMixin) -> None:
    st.altair_chart(altair_chart, width="stretch")


def lesson_header(lesson_id: str) -> Lesson:
    lesson = get_lesson(lesson_id)
    st.title(lesson.title)
    record_visit(lesson.id)
    return lesson


def lesson_footer(lesson_id: str) -> None:
    """Quick checks, then links to the previous and the next lesson."""
    lesson = get_lesson(lesson_id)
    if lesson.checks:
        st.divider()
        st.subheader("Check your understanding")
        st.caption("Predict first, then reveal. A wrong answer explains the misconception behind it.")
        for check in lesson.checks:
            quick_check(lesson.id, check)
    mark_done(lesson.id)
    prev_next(lesson.id)
    comments_section(lesson.id)


def check_answers() -> dict[str, dict[str, dict]]:
    return st.session_state.setdefault(CHECKS_KEY, {})


def quick_check(lesson_id: str, check: QuickCheck) -> None:
    answers = check_answers().setdefault(lesson_id, {})
    with st.container(border=True):
        st.markdown(f"**{check.question}**")
        choice = st.radio(
            "Your prediction",
            options=list(range(len(check.options))),
            format_func=lambda i: check.options[i].text,
            index=None,
            key=f"qc-choice-{lesson_id}-{check.id}",
        )
        if st.button("Reveal", key=f"qc-reveal-{lesson_id}-{check.id}", disabled=choice is None):
            answers[check.id] = {"choice": choice, "correct": check.options[choice].correct}
            record_check(lesson_id, check.id, check.options[choice].correct)
        answer = answers.get(check.id)
        if answer is not None:
            option = check.options[answer["choice"]]
            (st.success if option.correct else st.error)(
                ("Right. " if option.correct else "Not quite. ") + option.feedback)


def prev_next(lesson_id: str) -> None:
    previous, following = neighbours(lesson_id)
    left, right = st.columns(2)
    if previous is not None:
        left.page_link(previous.page_path, label=f"Previous: {previous.title}", icon=":material/arrow_back:")
    if following is not None:
        right.page_link(following.page_path, label=f"Next: {following.title}", icon=":material/arrow_forward:")


@st.cache_data(show_spinner=False, max_entries=256)
def _cached_call(module: str, name: str, kwargs: tuple[tuple[str, object], ...]) -> object:
    import importlib

    return getattr(importlib.import_module(module), name)(**dict(kwargs))


def cached(function, **kwargs):
    """``function(**kwargs)`` through ``st.cache_data``, keyed by the function's dotted name and the
    plain keyword arguments (ints, floats, strings, tuples; never tensors).

    Lets a page make its one library call per section without recomputing it on every rerun;
    the result (a frame, a chart, a small frozen dataclass) must pickle.
    """
    return _cached_call(function.__module__, function.__qualname__, tuple(sorted(kwargs.items())))


# --- the store, the grading gate and who the student is ----------------------------------------


@st.cache_resource(show_spinner=False)
def _open_store(url: str) -> Store:
    return Store(url)


@st.cache_resource(show_spinner=False)
def _grading_gate(max_at_once: int) -> GradingGate:
    return GradingGate(max_at_once)  # one per app process: every session shares the bound


def store() -> Store | None:
    """The app's one Store (cached); None, after saying why, when it cannot be opened."""
    url = Settings.from_env().db_url
    try:
        return _open_store(url)
    except ImportError as error:  # e.g. a postgresql:// URL without its driver installed
        st.error(f"Progress is not being saved: the database driver is missing ({error}). "
                 "Install it (see README) and restart the app.")
    except (ValueError, SQLAlchemyError) as error:
        st.error(f"Progress is not being saved: the database address POSLAB_DB_URL is not usable ({error}).")
    return None


def grading_gate() -> GradingGate:
    return _grading_gate(Settings.from_env().max_gradings)


def store_call(action: str, call: Callable[[Store], T], fallback: T) -> T:
    """``call(store)``, or ``fallback`` after a sentence saying what could not be done and why."""
    opened = store()
    if opened is None:
        return fallback
    try:
        return call(opened)
    except (ValueError, KeyError) as error:
        st.warning(f"Could not {action}: {error.args[0] if error.args else error}")
    except StoreError as error:  # busy or too new: its message says what to do
        st.error(f"Could not {action}. {error}")
    except (SQLAlchemyError, OSError) as error:
        st.error(f"Could not {action}: the progress database cannot be reached right now "
                 f"({type(error).__name__}). Please try again in a moment; tell your instructor if it persists.")
    return fallback


def current_student() -> str | None:
    """The logged-in account, else the name typed this session, else the one in the URL."""
    found = resolve_identity(st.user.to_dict(), st.query_params.to_dict(), st.session_state.get(STUDENT_KEY))
    return found.name if found else None


def _forget_name() -> None:
    st.session_state.pop(STUDENT_KEY, None)
    st.query_params.pop(NAME_PARAM, None)


def _name_form() -> None:
    with st.form("student-name-form", border=False):
        typed = st.text_input("Your name", max_chars=64, placeholder="e.g. Ada Lovelace",
                              help="Your progress is saved under this name.")
        if st.form_submit_button("Start", icon=":material/login:"):
            try:
                st.session_state[STUDENT_KEY] = clean_name(typed)
            except ValueError as error:
                st.error(str(error))
            else:
                st.rerun()  # redraw the whole page as this student


def _login_box(user: dict) -> None:
    account = login_identity(user)
    if account is None:
        st.info("Log in to save your progress.")
        st.button("Log in", icon=":material/login:", on_click=st.login)
    else:
        st.text(f"Signed in as {account}")  # st.text: an account name is not Markdown
        st.button("Log out", icon=":material/logout:", on_click=st.logout)


def _name_box() -> None:
    student = current_student()
    if student is None:
        _name_form()
        st.caption("Type a name to save your progress. Anyone can type any name: "
                   "this is for a classroom, not for the internet.")
        return
    st.session_state[STUDENT_KEY] = student
    st.query_params[NAME_PARAM] = student  # in the URL on every page, so a reload keeps it
    st.text(f"Studying as {student}")  # st.text: the name is whatever was typed, never Markdown
    st.button("Change name", icon=":material/logout:", on_click=_forget_name)


def overall_progress(student: str) -> None:
    progress = student_progress(student)
    if progress is not None:
        st.progress(min(progress.percent, 100.0) / 100.0, text=f"Course progress: {progress.percent:.0f}%")


def sidebar() -> None:
    """Who is studying and how far they are: drawn by app.py on every page."""
    with st.sidebar:
        user = st.user.to_dict()
        if login_configured(user):
            _login_box(user)
        else:
            _name_box()
        student = current_student()
        if student is not None:
            overall_progress(student)


# --- what lesson pages store --------------------------------------------------------------------


def record_visit(lesson_id: str) -> None:
    """Store the first visit of each lesson per session (reruns would otherwise repeat it)."""
    student = current_student()
    recorded = st.session_state.setdefault(VISITS_KEY, set())
    if student is None or (student, lesson_id) in recorded:
        return
    store_call("save your visit", lambda opened: opened.record_visit(student, lesson_id), None)
    recorded.add((student, lesson_id))


def record_check(lesson_id: str, check_id: str, correct: bool) -> None:
    student = current_student()
    if student is not None:
        store_call("save your answer", lambda opened: opened.record_check(student, lesson_id, check_id, correct), None)


def student_progress(student: str) -> StudentProgress | None:
    return store_call("load your progress", lambda opened: opened.progress(student), None)


def mark_done(lesson_id: str) -> None:
    """A "mark lesson done" control, or the note that it is done."""
    student = current_student()
    if student is None:
        st.caption("Type your name in the sidebar to save your progress through this lesson.")
        return
    progress = student_progress(student)
    if progress is not None and progress.lesson(lesson_id).done:
        st.success("You have finished this lesson.", icon=":material/task_alt:")
    elif st.button("Mark lesson done", key=f"done-{lesson_id}", icon=":material/check:"):
        store_call("mark the lesson done", lambda opened: opened.complete_lesson(student, lesson_id), None)
        st.rerun()  # the sidebar (already drawn) shows the new percentage


# --- comments under every lesson -----------------------------------------------------------------


def _comment_key(lesson_id: str) -> str:
    return f"comment-text-{lesson_id}"


def _post_comment(lesson_id: str, student: str) -> None:
    """Form callback: save, and clear the box only when saved, so a failed post loses nothing."""
    key = _comment_key(lesson_id)
    saved = store_call("post your comment",
                       lambda opened: opened.add_comment(student, lesson_id, st.session_state.get(key, "")), None)
    if saved is not None:
        st.session_state[key] = ""


def _delete_comment(comment_id: int) -> None:
    store_call("delete the comment", lambda opened: opened.delete_comment(comment_id), None)


def comment_byline(comment: Comment) -> str:
    return f"{comment.student} · {comment.time:%Y-%m-%d %H:%M} UTC"


def show_comment(comment: Comment, can_delete: bool) -> None:
    # Plain text only: st.text never renders Markdown or HTML, whatever a student typed.
    with st.container(border=True):
        st.text(comment_byline(comment))
        st.text(comment.text)
        if can_delete:
            st.button("Delete", key=f"delete-comment-{comment.id}", icon=":material/delete:",
                      on_click=_delete_comment, args=(comment.id,))


def comments_section(lesson_id: str) -> None:
    st.divider()
    comments = store_call("load the comments", lambda opened: opened.comments(lesson_id), ())
    st.subheader(f"Comments ({len(comments)})")
    student = current_student()
    if student is None:
        st.caption("Type your name in the sidebar to comment.")
    else:
        with st.form(f"comment-form-{lesson_id}", border=False):
            st.text_area("Add a comment (plain text)", key=_comment_key(lesson_id), max_chars=MAX_COMMENT_CHARS)
            st.form_submit_button("Post", on_click=_post_comment, args=(lesson_id, student))
    for comment in comments:
        show_comment(comment, can_delete=bool(st.session_state.get(INSTRUCTOR_KEY)))


# --- the instructor's lock -------------------------------------------------------------------------


def instructor_password() -> str | None:
    """POSLAB_INSTRUCTOR_PASSWORD, else the ``instructor_password`` secret, else None."""
    configured = Settings.from_env().instructor_password
    if configured:
        return configured
    try:
        secret = st.secrets.get("instructor_password")
    except FileNotFoundError:  # no secrets.toml at all
        return None
    return str(secret) if secret else None


def instructor_unlocked() -> bool:
    return bool(st.session_state.get(INSTRUCTOR_KEY))


def lock_instructor() -> None:
    st.session_state[INSTRUCTOR_KEY] = False


# --- the Exercises page: hints, grading and results -------------------------------------------------


def _hints_revealed(student: str | None, exercise_id: str) -> int:
    shown = st.session_state.setdefault(HINTS_KEY, {}).get(exercise_id, 0)
    progress = student_progress(student) if student else None
    return max(shown, progress.exercise(exercise_id).hints_used if progress else 0)


def _reveal_hint(student: str | None, exercise_id: str, tier: int) -> None:
    st.session_state.setdefault(HINTS_KEY, {})[exercise_id] = tier
    if student is not None:
        store_call("save that you used a hint", lambda opened: opened.record_hint(student, exercise_id, tier), None)


def show_hints(student: str | None, exercise_id: str) -> None:
    """Hints one tier at a time; the tiers revealed are stored, so they stay revealed."""
    hints = exercise_hints(exercise_id)
    revealed = min(_hints_revealed(student, exercise_id), len(hints))
    for tier, hint in enumerate(hints[:revealed], start=1):
        with st.container(border=True):
            st.markdown(f":material/lightbulb: **Hint {tier} of {len(hints)}: {HINT_TIERS[tier - 1]}**")
            st.code(hint, language=None, wrap_lines=True)  # plain text with formulas: not Markdown
    if revealed < len(hints):
        st.button(f"Show hint {revealed + 1} of {len(hints)}", key=f"hint-{exercise_id}",
                  icon=":material/lightbulb:", on_click=_reveal_hint, args=(student, exercise_id, revealed + 1))


def in_student_bundle() -> bool:
    try:
        return grading_service.in_student_bundle()
    except GradingError:
        return False  # no grader: grading itself will say so


def _grade(student: str, submission, code_by_exercise: dict[str, str | None]) -> None:
    with st.status("Grading your code in a sandbox…", expanded=True) as status:
        def waiting(message: str) -> None:
            status.update(label="Waiting for a free grader…")
            st.write(message)

        try:
            result = grading_service.grade(grading_gate(), student, submission, on_wait=waiting)
        except GradingError as error:
            status.update(label="Not graded", state="error")
            st.error(str(error))
            return
        saved = store_call("save your score",
                           lambda opened: grading_service.save_attempts(opened, student, result, code_by_exercise), [])
        status.update(label=f"Graded in {result.execution_time:.0f} s" + (" and saved" if saved else ""),
                      state="complete", expanded=False)
    st.session_state[GRADED_KEY] = {"exercises": list(code_by_exercise), "result": result}


def submit_source(student: str, exercise: Exercise, read_source: Callable[[], str]) -> None:
    """Check an upload or paste, then grade it as the exercise's file and save the score with the code."""
    try:
        source = read_source()
    except SubmissionRejected as error:
        st.error(str(error), icon=":material/block:")
        return
    _grade(student, {exercise.filename: source}, {exercise.id: source})


def submit_folder(student: str, folder, exercises: tuple[Exercise, ...]) -> None:
    """Grade the student's exercises/ folder as it is on disk; every exercise's score is saved."""
    def code(exercise: Exercise) -> str | None:
        path = folder / exercise.filename
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    _grade(student, folder, {exercise.id: code(exercise) for exercise in exercises})


def show_last_result(titles: dict[str, str]) -> None:
    """This session's last grading: score, visible tests as a table, how many are hidden."""
    last = st.session_state.get(GRADED_KEY)
    if last is None:
        return
    result, exercise_ids = last["result"], last["exercises"]
    st.subheader("Your last result")
    if result.public_tests_only:
        st.info("Public tests only: this copy of the course has no hidden tests, so this score is feedback, "
                "not your grade. The hidden suite runs when your instructor grades your work.")
    for message in result.messages:  # may quote the student's own code or exception text: not Markdown
        st.code(message, language=None, wrap_lines=True)
    for exercise_id in exercise_ids:
        st.markdown(f"**{titles.get(exercise_id, exercise_id)}:** {grading_service.score_line(result, exercise_id)}")
    st.dataframe(grading_service.visible_tests(result, exercise_ids), hide_index=True)
    for name, message in grading_service.visible_failures(result, exercise_ids):
        st.markdown(f"**Failed:** `{name}`")  # test names come from the trusted suite
        st.code(message, language=None, wrap_lines=True)  # may quote the student's exception text
    hidden = grading_service.hidden_test_count(result, exercise_ids)
    if hidden:
        st.caption(f"{hidden} more test{'s' if hidden != 1 else ''} ran but {'are' if hidden != 1 else 'is'} hidden: "
                   "they count in the score; their names and messages are for your instructor.")


def progress_at_a_glance() -> None:
    """Home's summary: overall progress, lessons done, and the one next step (or how to start saving)."""
    student = current_student()
    if student is None:
        st.caption("Enter your name in the sidebar to save your progress and see it here.")
        return
    progress = student_progress(student)
    if progress is None:
        return  # store_call has already said why
    st.progress(min(progress.percent, 100.0) / 100.0,
                text=f"{student}: {progress.percent:.0f}% of the course, "
                     f"{progress.lessons_done} of {len(progress.lessons)} lessons done")
    steps = next_steps(progress, all_lessons(), EXERCISES, limit=1)
    if steps:
        st.page_link(steps[0].page, label=f"Next: {steps[0].text}", icon=":material/arrow_forward:")
    else:
        st.success("You have finished every lesson and every exercise.")
