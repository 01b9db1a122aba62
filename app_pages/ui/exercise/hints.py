"""The Exercises page's hints: one tier at a time; the tiers revealed are stored, so they stay revealed."""

from __future__ import annotations

import streamlit as st

from app_pages.ui.store_calls import store_call, student_progress
from poslab.exercises import HINT_TIERS
from poslab.exercises import hints as exercise_hints

HINTS_KEY = "hints_shown"  # exercise id -> hints revealed this session (before a name is given)


def _hints_revealed(student: str | None, exercise_id: str) -> int:
    shown = st.session_state.setdefault(HINTS_KEY, {}).get(exercise_id, 0)
    progress = student_progress(student) if student else None
    return max(shown, progress.exercise(exercise_id).hints_used if progress else 0)


def _reveal_hint(student: str | None, exercise_id: str, tier: int) -> None:
    st.session_state.setdefault(HINTS_KEY, {})[exercise_id] = tier
    if student is not None:
        store_call("save that you used a hint", lambda opened: opened.record_hint(student, exercise_id, tier), None)


def show_hints(student: str | None, exercise_id: str) -> None:
    hints = exercise_hints(exercise_id)
    revealed = min(_hints_revealed(student, exercise_id), len(hints))
    for tier, hint in enumerate(hints[:revealed], start=1):
        with st.container(border=True):
            st.markdown(f":material/lightbulb: **Hint {tier} of {len(hints)}: {HINT_TIERS[tier - 1]}**")
            st.code(hint, language=None, wrap_lines=True)  # plain text with formulas: not Markdown
    if revealed < len(hints):
        st.button(
            f"Show hint {revealed + 1} of {len(hints)}",
            key=f"hint-{exercise_id}",
            icon=":material/lightbulb:",
            on_click=_reveal_hint,
            args=(student, exercise_id, revealed + 1),
        )
