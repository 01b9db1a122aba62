"""The Instructor page's pass rates counted by student (``poslab.pass_by_student``): for each
property family of the hidden suite, the share of students whose best attempt passes it, and the
share whose first attempt did."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui.store_calls import store_call
from grader.gradebook import graded_run
from grader.vocabulary import family_words
from poslab.pass_by_student import pass_rates_by_student


def by_student_table() -> pd.DataFrame | None:
    """The table, from every hidden-suite submission in the store; None when the store cannot say."""
    found = store_call("load the graded attempts", lambda store: store.graded_submissions(), None)
    return None if found is None else pass_rates_by_student(graded_run(attempt) for attempt in found)


def show_by_student() -> None:
    st.header("Which properties trip students up")
    st.caption(
        "Counted by student, not by attempt: for each property family of the hidden suite, the share of "
        "students whose best attempt (their grade) passes every test of it, and beside it the share whose "
        "first attempt did. Attempts that define nothing (the stub as given, or a file that did not import) "
        "are left out."
    )
    table = by_student_table()
    if table is None:
        return
    if table.empty:
        st.caption("No graded attempt that defines something yet.")
        return
    shown = table.assign(property=[family_words(family) for family in table["family"]])
    st.dataframe(
        shown,
        hide_index=True,
        column_order=["exercise", "property", "students", "best_rate", "first_rate", "best_passed", "first_passed"],
        column_config={
            "students": st.column_config.NumberColumn("students", help="Students with an attempt that ran it"),
            "best_rate": st.column_config.ProgressColumn(
                "best attempt", min_value=0, max_value=1, format="percent", help="Share whose best attempt passes"
            ),
            "first_rate": st.column_config.ProgressColumn(
                "first attempt", min_value=0, max_value=1, format="percent", help="Share whose first attempt passed"
            ),
            "best_passed": st.column_config.NumberColumn("pass (best)"),
            "first_passed": st.column_config.NumberColumn("pass (first)"),
        },
    )
    st.download_button(
        "Download the pass rates by student (CSV)",
        table.to_csv(index=False),
        "pass_rates_by_student.csv",
        mime="text/csv",
        icon=":material/download:",
    )
