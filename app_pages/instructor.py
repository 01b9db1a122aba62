"""Instructor: the whole class and each student, pass rates counted by student, the roster and its
sign-in links, grades back to the LMS, similar code and an export of all code, behind a password
(wrong ones limited: ``lock``; an unlock lasts the browser session, across reloads). One student's
page is ``?student_key=<key>``."""

import streamlit as st

from app_pages.runtime import sandbox_notice
from app_pages.ui.instructor import lock, pass_cookie
from app_pages.ui.instructor.class_table import STUDENT_PARAM
from app_pages.ui.instructor.class_view import roster, show_class
from app_pages.ui.instructor.code_export_view import code_export_section
from app_pages.ui.instructor.gradebook_view import gradebook_section
from app_pages.ui.instructor.lms import lms_export_section
from app_pages.ui.instructor.pass_rates_view import show_by_student
from app_pages.ui.instructor.roster_admin import roster_section
from app_pages.ui.instructor.similarity_view import similarity_section
from app_pages.ui.instructor.student_view import show_student

st.title("Instructor")
password = lock.instructor_password()
if password is None:
    st.info(
        "This page is locked until a password is configured. Set the environment variable "
        "`POSLAB_INSTRUCTOR_PASSWORD` before `streamlit run app.py`, or add "
        '`instructor_password = "..."` to `.streamlit/secrets.toml`, then restart the app.'
    )
    st.stop()

if not lock.instructor_unlocked():
    pass_cookie.run_script()  # after "Lock this page": the browser deletes its pass
    with st.form("instructor-login"):
        typed = st.text_input("Instructor password", type="password")
        if st.form_submit_button("Unlock", icon=":material/lock_open:"):
            refused = lock.unlock(typed, password)
            if refused is None:
                st.rerun()
            st.error(refused)
    st.stop()

st.button("Lock this page", icon=":material/lock:", on_click=lock.lock_instructor)
pass_cookie.run_script()  # after an unlock: the browser keeps it for its session
student = st.query_params.get(STUDENT_PARAM)
if student:
    members = roster() or ()
    show_student(student, next((member for member in members if member.key == student), None))
    st.stop()

st.caption("While unlocked, you can also delete comments under the lessons.")
sandbox_notice.show()  # bubblewrap, or the fallback and why
show_class()
show_by_student()
gradebook_section()
roster_section()
lms_export_section()
similarity_section()
code_export_section()
