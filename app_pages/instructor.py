"""Instructor: the class's progress, score distribution and per-test pass rates, the roster and its sign-in
links, and grades back to the LMS, behind a password (wrong ones limited: ``lock``)."""

import streamlit as st

from app_pages.runtime import sandbox_notice
from app_pages.ui import frame, identity, store_calls
from app_pages.ui.instructor import class_table, lock
from app_pages.ui.instructor.lms import lms_export_section
from app_pages.ui.instructor.roster_admin import roster_section
from grader.gradebook import GradebookError, load_gradebook
from poslab.viz.progress import pass_rate_chart, score_distribution_chart

st.title("Instructor")
password = lock.instructor_password()
if password is None:
    st.info(
        "This page is locked until a password is configured. Set the environment variable "
        "`POSLAB_INSTRUCTOR_PASSWORD` before `streamlit run app.py`, or add "
        '`instructor_password = "..."` to `.streamlit/secrets.toml`, then restart the app.'
    )
    st.stop()

if not identity.instructor_unlocked():
    with st.form("instructor-login"):
        typed = st.text_input("Instructor password", type="password")
        if st.form_submit_button("Unlock", icon=":material/lock_open:"):
            refused = lock.unlock(typed, password)
            if refused is None:
                st.rerun()
            st.error(refused)
    st.stop()

st.button("Lock this page", icon=":material/lock:", on_click=lock.lock_instructor)
st.caption("While unlocked, you can also delete comments under the lessons.")
sandbox_notice.show()  # bubblewrap, or the fallback and why

st.header("The class")
table = store_calls.store_call("load the class's progress", lambda store: store.class_progress(), None)
if table is not None and table.empty:
    st.caption("No student has done anything yet.")
elif table is not None:
    class_table.show(table)  # grades in points, as in the gradebook; with its CSV
    frame.chart(score_distribution_chart(table))  # its numbers are the class table just above

st.header("Which tests trip students up")
st.caption("Pass rate of each hidden test over every graded attempt stored by the app.")
rates = store_calls.store_call("load the per-test pass rates", lambda store: store.per_test_pass_rates(), None)
if rates is not None and rates.empty:
    st.caption("No graded attempts yet.")
elif rates is not None:
    frame.chart(pass_rate_chart(rates), numbers=True)
    st.download_button(
        "Download the pass rates (CSV)",
        rates.to_csv(index=False),
        "pass_rates.csv",
        mime="text/csv",
        icon=":material/download:",
    )

st.header("A gradebook from the command line")
st.caption("The folder given to `python -m grader grade --out DIR`, on the machine running this app.")
folder = st.text_input("Gradebook folder", placeholder="/path/to/grades", key="gradebook-folder")
if folder.strip():
    try:
        book = load_gradebook(folder.strip())
    except GradebookError as error:
        st.error(str(error))
    else:
        for problem in book.problems:
            st.warning(problem)
        st.dataframe(book.table, hide_index=True)
        frame.chart(score_distribution_chart(book.table.rename(columns={"id": "student"})))  # numbers: the table above
        if not book.pass_rates.empty:
            frame.chart(pass_rate_chart(book.pass_rates), numbers=True)
            st.download_button(
                "Download the gradebook's pass rates (CSV)",
                book.pass_rates.to_csv(index=False),
                "gradebook_pass_rates.csv",
                mime="text/csv",
                icon=":material/download:",
            )

roster_section()
lms_export_section()
