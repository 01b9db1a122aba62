"""Exercises: read the spec, reveal hints one tier at a time, submit code and see it graded."""

import streamlit as st

from app_pages.ui import feedback, grading, hints, identity
from grader.submissions import MAX_FILE_BYTES, source_from_paste, source_from_upload
from poslab.exercises import EXERCISES, spec

st.title("Exercises")
exercise = st.selectbox("Exercise", EXERCISES, format_func=lambda item: item.title, key="exercise-pick")
st.caption(f"Implement {', '.join(exercise.names)} in `{exercise.filename}`. The spec:")
st.code(spec(exercise.id), language=None, wrap_lines=True)  # plain text, the same as the stub's docstring
student = identity.current_student()
hints.show_hints(student, exercise.id)

st.subheader("Submit")
if grading.in_student_bundle():
    st.info("This is a student bundle: your code is checked against the public tests only. "
            "The hidden suite runs when your instructor grades your work.")
if student is None:
    st.info("Type your name in the sidebar (or log in) to submit: your score is saved under it.")
    st.stop()

upload_tab, paste_tab, folder_tab = st.tabs(["Upload a file", "Paste code", "My exercises/ folder"])
with upload_tab:
    upload = st.file_uploader(f"Your {exercise.filename} (a .py file, at most {MAX_FILE_BYTES // 1024} KB)",
                              key=f"upload-{exercise.id}")
    if st.button("Grade the uploaded file", key="grade-upload", disabled=upload is None, type="primary"):
        grading.submit_source(student, exercise, lambda: source_from_upload(upload.name, upload.getvalue()))
with paste_tab:
    pasted = st.text_area(f"The contents of your {exercise.filename}", height=260, key=f"paste-{exercise.id}")
    if st.button("Grade the pasted code", key="grade-paste", type="primary"):
        grading.submit_source(student, exercise, lambda: source_from_paste(pasted))
with folder_tab:
    folder = grading.exercises_folder()
    if folder is None:
        st.caption("This app is not running next to an exercises/ folder (a checkout or a student bundle).")
    else:
        st.download_button("Download the stubs and public tests (zip)", grading.exercises_zip(folder), "exercises.zip",
                           mime="application/zip", icon=":material/download:")
        st.caption(f"Grades every exercise in `{folder}` as it is saved on disk now.")
        if st.button("Grade my exercises/ folder", key="grade-folder", type="primary"):
            grading.submit_folder(student, folder, EXERCISES)

feedback.show_last_result({item.id: item.title for item in EXERCISES})
