"""Instructor: the whole class and each student, pass rates counted by student, regrades, scores set
by hand, the roster and its sign-in links, grades back to the LMS, similar code, an export of all
code, and the audit log. With a login or a roster, named instructors and TAs (``poslab.roles``)
come in by their sign-in; otherwise the shared password (wrong ones limited: ``lock``; an unlock
lasts the browser session, across reloads). TAs view and regrade; the rest is for instructors.
One student's page is ``?student_key=<key>``."""

import streamlit as st

from app_pages.runtime import sandbox_notice
from app_pages.ui.identity import instructor_access
from app_pages.ui.instructor import lock, pass_cookie
from app_pages.ui.instructor.audit_view import audit_section
from app_pages.ui.instructor.class_table import STUDENT_PARAM
from app_pages.ui.instructor.class_view import roster, show_class
from app_pages.ui.instructor.code_export_view import code_export_section
from app_pages.ui.instructor.gradebook_view import gradebook_section
from app_pages.ui.instructor.lms import lms_export_section
from app_pages.ui.instructor.override_view import override_section
from app_pages.ui.instructor.pass_rates_view import show_by_student
from app_pages.ui.instructor.regrade_view import regrade_section
from app_pages.ui.instructor.roster_admin import roster_section
from app_pages.ui.instructor.similarity_view import similarity_section
from app_pages.ui.instructor.student_view import show_student
from poslab.config import Settings
from poslab.roles import PASSWORD_ACTOR, TA_NOTE, refusal
from poslab.vocabulary import AuditAction

st.title("Instructor")
access = instructor_access(lock.instructor_unlocked())
if access.locked:
    st.info(access.locked)
    st.stop()
if access.actor is None:
    password = lock.instructor_password()
    if password is None:
        st.info(
            "This page is locked until a password is configured. Set the environment variable "
            "`POSLAB_INSTRUCTOR_PASSWORD` before `streamlit run app.py`, or add "
            '`instructor_password = "..."` to `.streamlit/secrets.toml`, then restart the app. '
            "With a login or a roster, name the instructors and TAs in `POSLAB_INSTRUCTORS` and `POSLAB_TAS`."
        )
        st.stop()
    pass_cookie.run_script()  # after "Lock this page": the browser deletes its pass
    with st.form("instructor-login"):
        typed = st.text_input("Instructor password", type="password")
        if st.form_submit_button("Unlock", icon=":material/lock_open:"):
            refused = lock.unlock(typed, password)
            if refused is None:
                st.rerun()
            st.error(refused)
    st.stop()

actor = access.actor
if actor.name == PASSWORD_ACTOR:
    st.button("Lock this page", icon=":material/lock:", on_click=lock.lock_instructor)
    pass_cookie.run_script()  # after an unlock: the browser keeps it for its session
else:
    st.caption(f"Signed in as {actor.label}.")
student = st.query_params.get(STUDENT_PARAM)
if student:
    members = roster() or ()
    show_student(student, next((member for member in members if member.key == student), None))
    st.stop()

if refusal(actor, AuditAction.DELETE_COMMENT) is None:
    st.caption("You can also delete comments under the lessons.")
else:
    st.info(TA_NOTE, icon=":material/badge:")
sandbox_notice.show()  # bubblewrap, or the fallback and why
keys = show_class(actor)
show_by_student()
regrade_section(actor, keys, Settings.from_env().db_url)
if refusal(actor, AuditAction.OVERRIDE) is None:
    override_section(actor, keys)
gradebook_section()
roster_section(actor)
if refusal(actor, AuditAction.EXPORT) is None:
    lms_export_section(actor)
similarity_section()
if refusal(actor, AuditAction.EXPORT) is None:
    code_export_section(actor)
audit_section()
