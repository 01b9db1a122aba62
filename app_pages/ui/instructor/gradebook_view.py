"""The Instructor page's gradebook from the command line: the folder ``python -m grader grade
--out DIR`` wrote, on the machine running the app, read back and charted."""

from __future__ import annotations

import streamlit as st

from app_pages.ui import frame
from grader.gradebook import GradebookError, load_gradebook
from poslab.viz.class_charts import pass_rate_chart, score_distribution_chart


def gradebook_section() -> None:
    st.header("A gradebook from the command line")
    st.caption("The folder given to `python -m grader grade --out DIR`, on the machine running this app.")
    folder = st.text_input("Gradebook folder", placeholder="/path/to/grades", key="gradebook-folder")
    if not folder.strip():
        return
    try:
        book = load_gradebook(folder.strip())
    except GradebookError as error:
        st.error(str(error))
        return
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
