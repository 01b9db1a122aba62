"""The Instructor page's "Similar code": each student's last submitted code for one exercise
compared with everyone else's (``grader.similarity``, the starter code left out); the flagged
pairs in a table, and a chosen pair's code side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui.store_calls import store_call
from grader.similarity import SimilarityReport, SimilarPair, find_similar_pairs, line_ranges
from poslab.exercises import EXERCISES

TITLES = {exercise.id: exercise.title for exercise in EXERCISES}


@st.cache_data(show_spinner="Comparing every two students' code...", max_entries=32)
def similar_pairs(exercise: str, codes: tuple[tuple[str, str], ...]) -> SimilarityReport:
    """The check on (student, code) pairs: a rerun with the same submissions is not compared again."""
    return find_similar_pairs(exercise, dict(codes))


def _pairs_table(report: SimilarityReport) -> pd.DataFrame:
    rows = [
        (number, pair.student_a, pair.student_b, pair.score, pair.share_a, pair.share_b)
        for number, pair in enumerate(report.pairs, start=1)
    ]
    return pd.DataFrame(
        rows, columns=["pair", "student", "other student", "score", "share of the first", "share of the other"]
    )


def _lines(code: str, pair_regions: tuple[tuple[int, int], ...]) -> str:
    ranges = line_ranges(code, pair_regions)
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in ranges) or "none"


def _side(column, student: str, share: float, code: str, regions: tuple[tuple[int, int], ...]) -> None:
    column.text(f"{student}: {share:.0%} of this code matches (lines {_lines(code, regions)})")  # text: never Markdown
    column.code(code, language="python", line_numbers=True, wrap_lines=True)  # narrow columns: wrap, never cut


def _show_pair(pair: SimilarPair, codes: dict[str, str]) -> None:
    left, right = st.columns(2)
    _side(left, pair.student_a, pair.share_a, codes[pair.student_a], pair.regions_a)
    _side(right, pair.student_b, pair.share_b, codes[pair.student_b], pair.regions_b)


def similarity_section() -> None:
    st.header("Similar code")
    st.caption(
        "Each student's last submitted code for one exercise, compared with every other student's. Names, "
        "comments, layout and the order of functions are set aside and the starter code is left out, so a "
        "renamed copy still matches. A pair is flagged when most of one student's code is found in the other's; "
        "it asks for a look, not a verdict. Solutions of a few lines (sinusoidal, learned) converge and are "
        "rarely flagged."
    )
    exercise = st.selectbox(
        "Exercise",
        list(TITLES),
        index=None,
        format_func=TITLES.get,
        placeholder="Choose one",
        key="similarity-exercise",
    )
    if exercise is None:
        return
    codes = store_call("load the last submissions", lambda store: store.last_submitted_code(exercise), None)
    if codes is None:
        return
    if len(codes) < 2:
        st.caption(f"{len(codes)} student(s) handed in code for this exercise: nothing to compare yet.")
        return
    report = similar_pairs(exercise, tuple(sorted(codes.items())))
    if not report.pairs:
        st.success(f"{len(report.students)} students compared: no pair is flagged.", icon=":material/task_alt:")
        return
    st.warning(
        f"{len(report.students)} students compared: {len(report.pairs)} pair(s) flagged.", icon=":material/flag:"
    )
    st.dataframe(
        _pairs_table(report),
        hide_index=True,
        column_config={
            "score": st.column_config.ProgressColumn("score", min_value=0, max_value=1, format="percent"),
            "share of the first": st.column_config.NumberColumn(format="percent"),
            "share of the other": st.column_config.NumberColumn(format="percent"),
        },
    )
    chosen = st.selectbox(
        "Show a pair side by side",
        range(len(report.pairs)),
        format_func=lambda index: f"{index + 1}. {report.pairs[index].student_a} and {report.pairs[index].student_b}",
        key=f"similarity-pair-{exercise}",
    )
    _show_pair(report.pairs[chosen], codes)
