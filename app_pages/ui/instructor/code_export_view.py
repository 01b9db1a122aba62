"""The Instructor page's "Export all code": every submission's code in one zip, by student,
exercise and attempt (``poslab.store.code_export``), made when the button is clicked."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from app_pages.ui import store_calls
from poslab.roles import Actor
from poslab.store import Store


def export_all_code(store: Store, actor: Actor) -> bytes:
    """The instructor's export of every submission's code: the zip's bytes, recorded in the audit log."""
    archive = store.export_code_zip()
    store.record_export("all code", f"{len(archive)} bytes", actor=actor)
    return archive


def code_export_section(actor: Actor) -> None:
    st.header("Export all code")
    st.caption(
        "Every submission's code in one zip: `<student>/<exercise>/attempt-<n>-<UTC time>/<file>`, attempts "
        "numbered from the first, with `index.csv` listing each with its score. Practice runs of the public "
        "tests are not included. The zip is made when you click."
    )
    opened = store_calls.store()
    if opened is None:
        return
    st.download_button(
        "Download all code (zip)",
        lambda: export_all_code(opened, actor),  # runs on the click, in a thread of its own
        f"poslab-code-{datetime.now(UTC):%Y%m%d}.zip",
        mime="application/zip",
        on_click="ignore",
        icon=":material/folder_zip:",
        key="code-export-download",
    )
