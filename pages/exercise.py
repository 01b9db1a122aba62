"""Exercises: read the spec, reveal hints one tier at a time, submit code and see it graded."""

import streamlit as st

from pages import ui
from poslab.exercises import EXERCISES, spec
from poslab.grading_service import MAX_UPLOAD_BYTES, exercises_folder, exercises_zip, source_from_paste, source_from_upload

st.title("Exercises")
exercise = st.selectbox("Exercise", EXERCISES, format_func=lambda item: item.title, key="exercise-pick")
st.caption(f"Implement {', '.join(exercise.names)} in `{exercise.filename}`. The spec:")
st.code(spec(exercise.id), language=None, wrap_lines=True)  # plain text, the same as the stub's docstring
student = ui.current_student()
ui.show_hints(student, exercise.id)

st.subheader("Submit")
if ui.in_student_bundle():
    st.info("This is a student bundle: your code is checked against the public tests only. "
            "The hidden suite runs when your instructor grades your work.")
if student is None:
    st.info("Type your name in the sidebar (or log in) to submit: your score is saved under it.")
    st.stop()

upload_tab, paste_tab, folder_tab = st.tabs(["Upload a file", "Paste code", "My exercises/ folder"])
with upload_tab:
    upload = st.file_uploader(f"Your {exercise.filename} (a .py file, at most {MAX_UPLOAD_BYTES // 1024} KB)",
                              key=f"upload-{exercise.id}")
    if st.button("Grade the uploaded file", key="grade-upload", disabled=upload is None, type="primary"):
        ui.submit_source(student, exercise, lambda: source_from_upload(upload.name, upload.getvalue()))
with paste_tab:
    pasted = st.text_area(f"The contents of your {exercise.filename}", height=260, key=f"paste-{exercise.id}")
    if st.button("Grade the pasted code", key="grade-paste", type="primary"):
        ui.submit_source(student, exercise, lambda: source_from_paste(pasted))
with folder_tab:
    folder = exercises_folder()
    if folder is None:
        st.caption("This app is not running next to an exercises/ folder (a checkout or a student bundle).")
    else:
        st.download_button("Download the stubs and public tests (zip)", exercises_zip(folder), "exercises.zip",
                           mime="application/zip", icon=":material/download:")
        st.caption(f"Grades every exercise in `{folder}` as it is saved on disk now.")
        if st.button("Grade my exercises/ folder", key="grade-folder", type="primary"):
            ui.submit_folder(student, folder, EXERCISES)

ui.show_last_result({item.id: item.title for item in EXERCISES})
