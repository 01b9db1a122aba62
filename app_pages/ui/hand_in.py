"""The Exercises page's hand-in: run the public tests, submit for grading, what each answers, the attempts.

``panel`` is a fragment: a click reruns it, not the spec and the editor. What it answers comes
in one of two ways (``app_pages.ui.grading`` says why the first is the usual one):

* in the click's own run, when the first look finds the result: the attempts below it are
  drawn in the same run, new attempt included, and nothing polls;
* else from a poll, a fragment inside it rerun every few tenths of a second while the job is
  pending, which draws the result as soon as it is in; the next poll then runs the whole page
  (the attempts, and no more polls).
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from app_pages.ui import feedback, grading, history, store_calls, workspace
from grader.results import SubmissionResult
from grader.submissions import MAX_FILE_BYTES, SubmissionRejected, source_from_upload
from poslab.exercises import EXERCISES, Exercise

TITLES = {item.id: item.title for item in EXERCISES}


@st.fragment
def panel(student: str, exercise: Exercise) -> None:
    """The buttons and what they answer."""
    run_column, submit_column, reset_column, download_column = st.columns([1, 1, 1, 1])
    if run_column.button("Run the public tests", key="run-public", icon=":material/science:", width="stretch"):
        grading.start_practice(student, exercise, workspace.current_code(student, exercise))
    if submit_column.button("Submit for grading", key="submit", type="primary", icon=":material/send:",
                            width="stretch"):
        grading.submit(student, {exercise.filename: workspace.current_code(student, exercise)}, (exercise.id,))
    with reset_column:
        reset_box(student, exercise)
    download_column.download_button(f"Download {exercise.filename}", workspace.current_code(student, exercise),
                                    exercise.filename, mime="text/x-python", icon=":material/download:",
                                    key=f"download-{exercise.id}", width="stretch")
    practice_panel(student, exercise)
    job_panel(student)
    # Keyed, so that it stays open through the page's own run that follows a result drawn by a poll.
    with st.expander("Other ways to hand in", key="other-ways-open", on_change="rerun"):
        other_ways(student, exercise)
    history.show_history(student, exercise, TITLES)


def poll(every_run, handed_in: datetime, *args) -> None:
    """``every_run(*args, every)`` as a fragment rerun every ``every`` s, less often as the wait grows."""
    every = grading.poll_seconds(handed_in)
    st.fragment(every_run, run_every=every)(*args, every)


# -- graded submissions ------------------------------------------------------------------------------

def job_panel(student: str) -> None:
    """The pending submission's place in the queue, or the last finished one's result or failure."""
    job = grading.pending_job(student)
    if job is None:
        return
    if job.finished is None and not job.looked:
        grading.first_look(job)  # before the poll exists: its timer must not fire while this run waits
        if job.finished is not None:
            job.drawn_by = "page"  # in this run, above the attempts, which are drawn after it
    if job.drawn_by == "page":
        show_finished(job)
        return
    poll(watch_job, job.handed_in, job.job_id)


def watch_job(job_id: str, every: float) -> None:
    """A poll: where the submission is (one row read), or its result, drawn here as soon as it is in.

    Once a poll has drawn the result, the next one runs the whole page: the attempts, no more polls."""
    job = st.session_state.get(grading.JOB_KEY)
    if job is None or job.job_id != job_id:
        st.rerun()  # another submission replaced this one: the page polls that one
    if job.drawn_by == "poll":
        job.drawn_by = "page"
        st.rerun()
    if job.finished is None:
        status = grading.job_status(job)
        if status is None:
            return  # the store could not be read (store_call said why): ask again at the next poll
        if not grading.settled(status):
            if grading.poll_seconds(job.handed_in) != every:
                st.rerun()  # a longer wait: the page registers the poll again, less often
            st.info(grading.status_sentence(status), icon=":material/hourglass_top:")
            return
        job.finished = status
    job.drawn_by = "poll"
    show_finished(job)


def show_finished(job: grading.PendingJob) -> None:
    finished = job.finished
    if finished.state == "failed":
        st.error(finished.message or "The grading failed.", icon=":material/error:")
        return
    result = finished.result
    st.header("Your last result")
    st.caption(f"Handed in at {job.handed_in:%H:%M:%S} UTC.")
    shown = job.exercises or tuple(result.exercises) or tuple(TITLES)
    feedback.show_result(result, shown, TITLES)


# -- practice: the public tests on the draft -----------------------------------------------------------

def practice_panel(student: str, exercise: Exercise) -> None:
    run = grading.practice_runs().get(exercise.id)
    if run is None:
        runs = store_calls.store_call("load your practice runs",
                                      lambda opened: opened.practice_runs(student, exercise.id), ())
        if runs:
            show_practice(SubmissionResult.from_dict(runs[-1].result), runs[-1].time, exercise.id)
        return
    result = grading.practice_result(student, run)
    if result is None:
        poll(watch_practice, run.handed_in, student, exercise)
        return
    show_practice(result, run.handed_in, exercise.id)


def watch_practice(student: str, exercise: Exercise, every: float) -> None:
    """A poll: the practice run's result as soon as it is in; then the page's own run ends the polls."""
    run = grading.practice_runs().get(exercise.id)
    if run is None or run.shown:
        st.rerun()
    result = grading.practice_result(student, run)
    if result is not None:
        show_practice(result, run.handed_in, exercise.id)
        return
    if grading.poll_seconds(run.handed_in) != every:
        st.rerun()
    st.info(grading.practice_waiting_sentence(), icon=":material/science:")


def show_practice(result: SubmissionResult | str, handed_in: datetime, exercise_id: str) -> None:
    if isinstance(result, str):
        st.error(result)
        return
    with st.container(border=True):
        st.markdown("**Public tests on your draft** (practice: not an attempt, not a grade)")
        st.caption(f"Run at {handed_in:%H:%M:%S} UTC.")
        feedback.show_result(result, [exercise_id], TITLES)


# -- resetting, and the other ways to hand in -------------------------------------------------------------

def reset_box(student: str, exercise: Exercise) -> None:
    with st.popover("Reset to the starter code", icon=":material/restart_alt:"):
        st.warning("This replaces the code in the editor (your draft) with the starter code. "
                   "Your submitted attempts are kept.")
        st.button("Discard my draft and reset", key=f"reset-{exercise.id}", type="primary",
                  on_click=_reset, args=(student, exercise))


def _reset(student: str, exercise: Exercise) -> None:
    workspace.replace_text(student, exercise, workspace.starter_code(exercise), "The editor has the starter code again.")
    st.rerun()  # the whole page: the editor, outside this fragment, mounts the starter code


def other_ways(student: str, exercise: Exercise) -> None:
    tabs = ["Upload a file"] + (["My exercises/ folder"] if grading.local_workspace() else [])
    upload_tab, *folder_tab = st.tabs(tabs)
    with upload_tab:
        upload_form(student, exercise)
    for tab in folder_tab:
        with tab:
            folder_form(student)


def upload_form(student: str, exercise: Exercise) -> None:
    limit = f"{MAX_FILE_BYTES // 1024} KB"
    upload = st.file_uploader(f"Your {exercise.filename} (a .py file, at most {limit})", type=["py"],
                              key=f"upload-{exercise.id}", help=f"Files over {limit} are refused.")
    if st.button("Submit the uploaded file for grading", key="grade-upload", disabled=upload is None):
        try:
            source = source_from_upload(upload.name, upload.getvalue())
        except SubmissionRejected as error:
            st.error(str(error), icon=":material/block:")
            return
        if grading.submit(student, {exercise.filename: source}, (exercise.id,)):
            st.rerun()  # its answer is drawn above this form


def folder_form(student: str) -> None:
    folder = grading.exercises_folder()
    if folder is None:
        st.caption("This app is not running next to an exercises/ folder.")
        return
    st.download_button("Download the stubs and public tests (zip)", grading.exercises_zip(folder),
                       "exercises.zip", mime="application/zip", icon=":material/download:")
    st.caption(f"Grades every exercise in `{folder}` as it is saved on disk now.")
    if st.button("Grade my exercises/ folder", key="grade-folder"):
        if grading.submit_folder(student, folder, EXERCISES):
            st.rerun()
