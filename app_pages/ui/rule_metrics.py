"""The engine lessons' kept-and-broken display: a rule's largest error and first wrong step, side by side."""

import streamlit as st

from app_pages.ui import frame


def show_rules(view, kept: str, broken: str, unit: str = "largest error") -> None:
    """The kept and the broken rule side by side: each one's largest error (or distance), and where it goes wrong."""
    for (side, rule), column in zip((("rule kept", kept), ("rule broken", broken)), st.columns(2)):
        value = view.largest[rule]
        column.metric(f"{side}: {unit}", f"{value:.1e}" if unit == "largest error" else f"{value:,}", help=rule)
        column.caption(
            f"{rule}. First step that goes wrong: "
            f"{'none' if view.first_wrong[rule] is None else view.first_wrong[rule]}."
        )
    frame.chart(view.chart, numbers=True)
