"""The Instructor page's audit log: every action taken on the class, newest first (instructors and TAs see it)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui import clock
from app_pages.ui.store_calls import store_call
from poslab.roles import ROLE_TITLES, Role


def audit_table(entries) -> pd.DataFrame:
    rows = [
        (
            clock.shown(entry.at, clock.DATE_TIME),
            entry.actor if entry.role is None else f"{entry.actor} ({ROLE_TITLES[Role(entry.role)]})",
            entry.action.value.replace("_", " "),
            entry.target,
            entry.detail,
            entry.reason or "",
        )
        for entry in entries
    ]
    return pd.DataFrame(rows, columns=["when", "who", "action", "on", "what", "reason"])


def audit_section() -> None:
    st.header("Audit log")
    entries = store_call("load the audit log", lambda store: store.audit_entries(), ())
    if not entries:
        st.caption("Nothing done yet: re-issues, withdrawals, sign-outs, roster changes, extensions, overrides, "
                   "regrades, comment deletions and exports are listed here.")  # fmt: skip
        return
    st.caption(f"The last {len(entries)} actions, newest first (times in your time zone).")
    st.dataframe(audit_table(entries), hide_index=True)
