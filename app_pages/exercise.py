"""Exercises: read the spec, write the code in the editor (saved as a draft), run the public tests, submit.

The exercise is in the URL (``?exercise=rope``) and in the session, so a reload, the Progress
page's links and coming back all open the same one. Gradings go to the grading service; the page
polls the job in a fragment while it is pending and never waits in its script thread. The
fragment draws the result itself as soon as it is there, and only then asks for one run of the
whole page (the attempts list, no more polling).
"""

import streamlit as st

from app_pages.ui import feedback, grading, hints, history, identity, store_calls, workspace
from grader.results import SubmissionResult
from grader.submissions import MAX_FILE_BYTES, SubmissionRejected, source_from_upload
from poslab.exercises import EXERCISES, Exercise, get_exercise, spec

EXERCISE_PARAM = "exercise"
CHOSEN_KEY = "exercise_chosen"  # the exercise last open in this session (the widget's key is dropped off-page)
PICK_KEY = "exercise-pick"
TITLES = {item.id: item.title for item in EXERCISES}


def chosen_exercise() -> Exercise:
    """The ?exercise= of the address, else this session's last one, else the first exercise."""
    ids = [item.id for item in EXERCISES]
    if PICK_KEY not in st.session_state:
        wanted = st.query_params.get(EXERCISE_PARAM) or st.session_state.get(CHOSEN_KEY)
        st.session_state[PICK_KEY] = wanted if wanted in ids else ids[0]
    picked = st.selectbox("Exercise", ids, format_func=TITLES.get, key=PICK_KEY)
    st.session_state[CHOSEN_KEY] = picked
    st.query_params[EXERCISE_PARAM] = picked
    return get_exercise(picked)


def poll(every_run, handed_in, *args) -> None:
    """``every_run(*args)`` as a fragment rerun every few tenths of a second, less often as the wait grows."""
    st.fragment(every_run, run_every=grading.poll_seconds(handed_in))(*args)


def watch_job(job_id: str, every: float) -> None:
    """While a submission is pending: where it is (one row read); its result, drawn here as soon as it is in."""
    job = st.session_state.get(grading.JOB_KEY)
    if job is None or job.job_id != job_id or job.finished is not None:
        st.rerun()  # graded and drawn by the poll before: now the page's own run (attempts, no more polls)
    status = grading.job_status(job)
    if status is None:
        return  # the store could not be read (store_call said why): ask again at the next poll
    if grading.settled(status):
        job.finished = status
        show_finished(job)  # now, from this fragment; the next poll runs the page, for the attempts
        return
    if grading.poll_seconds(job.handed_in) != every:
        st.rerun()  # a longer wait: the page registers the poll again, less often
    st.info(grading.status_sentence(status), icon=":material/hourglass_top:")


def watch_practice(student: str, exercise: Exercise, every: float) -> None:
    run = grading.practice_runs().get(exercise.id)
    if run is None:
        st.rerun()
    if run.shown:
        st.rerun()  # drawn by the poll before: the page's own run stops the polls
    result = grading.practice_result(student, run)
    if result is not None:
        show_practice(exercise, result)
        return
    if grading.poll_seconds(run.handed_in) != every:
        st.rerun()
    st.info(grading.practice_waiting_sentence(), icon=":material/science:")


def _reset(student: str, exercise: Exercise) -> None:
    workspace.replace_text(student, exercise, workspace.starter_code(exercise), "The editor has the starter code again.")
    st.rerun()  # the whole page: the editor, outside this fragment, mounts the starter code


def reset_box(student: str, exercise: Exercise) -> None:
    with st.popover("Reset to the starter code", icon=":material/restart_alt:"):
        st.warning("This replaces the code in the editor (your draft) with the starter code. "
                   "Your submitted attempts are kept.")
        st.button("Discard my draft and reset", key=f"reset-{exercise.id}", type="primary",
                  on_click=_reset, args=(student, exercise))


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


def job_panel(student: str) -> None:
    """The pending submission's place in the queue, or the last finished one's result or failure."""
    job = grading.pending_job(student)
    if job is None:
        return
    if job.finished is None:
        status = grading.job_status(job)
        if status is None:
            return  # store_call has said why
        if not grading.settled(status):
            poll(watch_job, job.handed_in, job.job_id, grading.poll_seconds(job.handed_in))
            return
        job.finished = status
    show_finished(job)


def show_practice(exercise: Exercise, result: SubmissionResult | str) -> None:
    if isinstance(result, str):
        st.error(result)
        return
    with st.container(border=True):
        st.markdown("**Public tests on your draft** (practice: not an attempt, not a grade)")
        feedback.show_result(result, [exercise.id], TITLES)


def practice_panel(student: str, exercise: Exercise) -> None:
    run = grading.practice_runs().get(exercise.id)
    if run is not None:
        result = grading.practice_result(student, run)
        if result is None:
            poll(watch_practice, run.handed_in, student, exercise, grading.poll_seconds(run.handed_in))
            return
    else:
        runs = store_calls.store_call("load your practice runs",
                                      lambda opened: opened.practice_runs(student, exercise.id), ())
        if not runs:
            return
        result = SubmissionResult.from_dict(runs[-1].result)
    show_practice(exercise, result)


def other_ways(student: str, exercise: Exercise) -> None:
    tabs = ["Upload a file"] + (["My exercises/ folder"] if grading.local_workspace() else [])
    upload_tab, *folder_tab = st.tabs(tabs)
    with upload_tab:
        limit = f"{MAX_FILE_BYTES // 1024} KB"
        upload = st.file_uploader(f"Your {exercise.filename} (a .py file, at most {limit})", type=["py"],
                                  key=f"upload-{exercise.id}", help=f"Files over {limit} are refused.")
        if st.button("Submit the uploaded file for grading", key="grade-upload", disabled=upload is None):
            try:
                source = source_from_upload(upload.name, upload.getvalue())
            except SubmissionRejected as error:
                st.error(str(error), icon=":material/block:")
            else:
                if grading.submit(student, {exercise.filename: source}, (exercise.id,)):
                    st.rerun()  # the result is polled above this part of the page: draw it again
    for tab in folder_tab:
        with tab:
            folder = grading.exercises_folder()
            if folder is None:
                st.caption("This app is not running next to an exercises/ folder.")
                continue
            st.download_button("Download the stubs and public tests (zip)", grading.exercises_zip(folder),
                               "exercises.zip", mime="application/zip", icon=":material/download:")
            st.caption(f"Grades every exercise in `{folder}` as it is saved on disk now.")
            if st.button("Grade my exercises/ folder", key="grade-folder"):
                if grading.submit_folder(student, folder, EXERCISES):
                    st.rerun()


st.title("Exercises")
exercise = chosen_exercise()
st.caption(f"Implement {', '.join(exercise.names)} in `{exercise.filename}`. The spec:")
st.code(spec(exercise.id), language=None, wrap_lines=True)  # plain text, the same as the stub's docstring
student = identity.current_student()
hints.show_hints(student, exercise.id)

st.header("Your code")
if grading.in_student_bundle():
    st.info("This is a student bundle: your code is checked against the public tests only. "
            "The hidden suite runs when your instructor grades your work.")
if student is None:
    st.info("Type your name in the sidebar (or log in) to write and submit your code: your draft and your "
            "score are saved under it.")
    st.download_button(f"Download the starter code ({exercise.filename})", workspace.starter_code(exercise),
                       exercise.filename, mime="text/x-python", icon=":material/download:")
    st.stop()

@st.fragment
def hand_in(student: str, exercise: Exercise) -> None:
    """The buttons and what they answer: a click reruns this part only, not the spec, editor and attempts."""
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


workspace.sync_with_store(student, exercise)
workspace.editor(student, exercise)
hand_in(student, exercise)

with st.expander("Other ways to hand in"):
    other_ways(student, exercise)
history.show_history(student, exercise, TITLES)
