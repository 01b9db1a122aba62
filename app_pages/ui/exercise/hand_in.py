"""The Exercises page's hand-in: run the public tests, submit for grading, what each answers, the attempts.

``panel`` is a fragment: a click reruns it, not the spec and the editor. A submission and a practice
run are watched the same way (``watch_panel``, a ``grading.Watch`` each), and their answer comes in
one of two ways (``app_pages.ui.exercise.grading`` says why the first is the usual one):

* in the click's own run, when the first look finds it: the attempts below it are drawn in the
  same run, new attempt included, and nothing polls;
* else from a poll, a fragment inside it rerun every few tenths of a second while the job is not
  settled, which draws the answer as soon as it is in; the next poll then runs the whole page
  (the attempts, and no more polls).
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from app_pages.ui import clock
from app_pages.ui.exercise import feedback, grading, history, local_folder, workspace
from app_pages.ui.exercise.picker import TITLES
from grader.results import SubmissionResult
from grader.submissions import MAX_FILE_BYTES, SubmissionRejected, source_from_upload
from grader.vocabulary import WatchState
from poslab.exercises import EXERCISES, Exercise
from poslab.vocabulary import AttemptKind


@st.fragment
def panel(student: str, exercise: Exercise) -> None:
    """The buttons and what they answer."""
    workspace.receive_editor_text(student, exercise)  # typing not saved yet is saved once, here
    draft = workspace.draft_text(student, exercise)
    # Each button as wide as its label; on a narrow page the row wraps (columns would cut the labels).
    buttons = st.container(horizontal=True, gap="small")
    run_asked = workspace.take_run_request(student, exercise)  # Ctrl+Enter in the editor
    if buttons.button("Run the public tests", key="run-public", icon=":material/science:") or run_asked:
        grading.start_practice(student, exercise, draft)
    if buttons.button("Submit for grading", key="submit", type="primary", icon=":material/send:"):
        grading.submit(student, {exercise.filename: draft}, (exercise.id,))
    with buttons:
        reset_box(student, exercise)
    buttons.download_button(
        f"Download {exercise.filename}",
        draft,
        exercise.filename,
        mime="text/x-python",
        icon=":material/download:",
        key=f"download-{exercise.id}",
    )
    practice_panel(student, exercise)
    submission_panel(student, exercise.id)
    # Keyed, so that it stays open through the page's own run that follows a result drawn by a poll.
    with st.expander("Other ways to hand in", key="other-ways-open", on_change="rerun"):
        other_ways(student, exercise)
    history.show_history(student, exercise, TITLES)


# -- watching a submission or a practice run: the one way the page waits for an answer --------------------


def watch_panel(watch: grading.Watch, exercise_id: str) -> None:
    """The job's answer if it is in (looked for once, briefly, before any poll), else a poll for it."""
    if not watch.settled and not watch.looked:
        grading.first_look(watch)  # before the poll exists: its timer must not fire while this run waits
    if watch.settled and not watch.drawn_by_poll:
        draw(watch, exercise_id)  # in this run, above the attempts, which are drawn after it
        return
    every = grading.poll_seconds(watch.handed_in)
    st.fragment(watch_poll, run_every=every)(watch.kind, exercise_id, watch.job_id, every)


def watch_poll(kind: AttemptKind, exercise_id: str, job_id: str, every: float) -> None:
    """A poll: where the job is (one question to the service), or its answer, drawn as soon as it is in.

    Once a poll has drawn the answer, the next one runs the whole page: the attempts, no more polls."""
    watch = grading.watch_of(kind, exercise_id)
    if watch is None or watch.job_id != job_id:
        st.rerun()  # another job replaced this one: the page watches that one
    if watch.drawn_by_poll:
        watch.drawn_by_poll = False
        st.rerun()
    if grading.refresh(watch) is None:
        return  # the service could not be asked (store_call said why): ask again at the next poll
    if not watch.settled:
        if grading.poll_seconds(watch.handed_in) != every:
            st.rerun()  # a longer wait: the page registers the poll again, less often
        icon = ":material/science:" if kind == AttemptKind.PRACTICE else ":material/hourglass_top:"
        st.info(grading.waiting_sentence(watch), icon=icon)
        return
    watch.drawn_by_poll = True
    draw(watch, exercise_id)


def draw(watch: grading.Watch, exercise_id: str) -> None:
    """A settled job: the grader's failure, or the result (a submission's, or a practice run's)."""
    if watch.state == WatchState.FAILED:
        st.error(grading.waiting_sentence(watch), icon=":material/error:")
    elif watch.kind == AttemptKind.PRACTICE:
        show_practice(watch.status.result, watch.handed_in, exercise_id)
    else:
        show_submission(watch, exercise_id)


# -- graded submissions ------------------------------------------------------------------------------


def submission_panel(student: str, exercise_id: str) -> None:
    """This exercise's last submission: its place in the queue, or its result or failure."""
    watch = grading.last_submission(student, exercise_id)
    if watch is not None:
        watch_panel(watch, exercise_id)


def show_submission(watch: grading.Watch, exercise_id: str) -> None:
    """The result of the chosen exercise only, though the submission may have graded others too."""
    st.header("Your last result")
    st.caption(f"Handed in at {clock.shown(watch.handed_in)}.")
    feedback.show_result(watch.status.result, (exercise_id,), TITLES)


# -- practice: the public tests on the draft -----------------------------------------------------------


def practice_panel(student: str, exercise: Exercise) -> None:
    watch = grading.practice_watches().get(exercise.id)
    if watch is not None:
        watch_panel(watch, exercise.id)
        return
    last = grading.last_practice_run(student, exercise.id)
    if last is not None:
        show_practice(last.result, last.handed_in, exercise.id)


def show_practice(result: SubmissionResult, handed_in: datetime, exercise_id: str) -> None:
    with st.container(border=True):
        st.markdown("**Public tests on your draft** (practice: not an attempt, not a grade)")
        st.caption(f"Run at {clock.shown(handed_in)}.")
        feedback.show_result(result, [exercise_id], TITLES)


# -- resetting, and the other ways to hand in -------------------------------------------------------------


def reset_box(student: str, exercise: Exercise) -> None:
    with st.popover("Reset to the starter code", icon=":material/restart_alt:"):
        st.warning(
            "This replaces the code in the editor (your draft) with the starter code. Your submitted attempts are kept."
        )
        st.button(
            "Discard my draft and reset",
            key=f"reset-{exercise.id}",
            type="primary",
            on_click=_reset,
            args=(student, exercise),
        )


def _reset(student: str, exercise: Exercise) -> None:
    workspace.replace_text(
        student, exercise, workspace.starter_code(exercise), "The editor has the starter code again."
    )
    st.rerun()  # the whole page: the editor, outside this fragment, mounts the starter code


def other_ways(student: str, exercise: Exercise) -> None:
    tabs = ["Upload a file"] + (["My exercises/ folder"] if local_folder.local_workspace() else [])
    upload_tab, *folder_tab = st.tabs(tabs)
    with upload_tab:
        upload_form(student, exercise)
    for tab in folder_tab:
        with tab:
            folder_form(student)


# Streamlit's uploader takes whole megabytes only (at least 1) and writes that limit in its box: the
# smallest one, so that it never refuses a file before the app can say why. The rule a solution file
# meets is the grader's, 200 KB: the label states it, and the box's own "1MB per file", which would
# contradict it, is not drawn (UPLOAD_BOX_CSS).
UPLOAD_TRANSPORT_MB = 1
UPLOAD_BOX_CSS = "<style>.st-key-upload-box [data-testid='stFileUploaderDropzoneInstructions'] {display: none;}</style>"


def upload_form(student: str, exercise: Exercise) -> None:
    """Any file is taken (a type filter only shows a red "!"); the grader's own rule says in a sentence
    what is wrong with one that is no solution file, as soon as it is chosen."""
    limit = f"{MAX_FILE_BYTES // 1024} KB"
    st.html(UPLOAD_BOX_CSS)
    with st.container(key="upload-box"):
        upload = st.file_uploader(
            f"Your {exercise.filename} (a .py file of at most {limit})",
            key=f"upload-{exercise.id}",
            max_upload_size=UPLOAD_TRANSPORT_MB,
            help=f"The file you edited, e.g. {exercise.filename}: a Python file of at most {limit}.",
        )
    st.caption(
        f"A file over {UPLOAD_TRANSPORT_MB} MB is refused by the box before it is sent, and shows in red there: "
        f"a solution file is a .py file of at most {limit}."
    )
    source, problem = None, None
    if upload is not None:
        try:
            source = source_from_upload(upload.name, upload.getvalue())
        except SubmissionRejected as error:
            problem = str(error)
    if problem:
        st.error(problem, icon=":material/block:")
    if st.button("Submit the uploaded file for grading", key="grade-upload", disabled=source is None):
        if grading.submit(student, {exercise.filename: source}, (exercise.id,)):
            st.rerun()  # its answer is drawn above this form


def folder_form(student: str) -> None:
    folder = local_folder.exercises_folder()
    if folder is None:
        st.caption("This app is not running next to an exercises/ folder.")
        return
    st.download_button(
        "Download the stubs and public tests (zip)",
        local_folder.exercises_zip(folder),
        "exercises.zip",
        mime="application/zip",
        icon=":material/download:",
    )
    st.caption(f"Grades every exercise in `{folder}` as it is saved on disk now.")
    if st.button("Grade my exercises/ folder", key="grade-folder"):
        if local_folder.submit_folder(student, folder, EXERCISES):
            st.rerun()
