"""The start-up heap is frozen only in a served app, never in a test process running AppTest."""

from __future__ import annotations

import gc

from streamlit.testing.v1 import AppTest


def _page() -> None:
    import gc

    import streamlit as st

    from app_pages.runtime import heap

    st.write(f"served={heap.served()} frozen={heap.freeze_start_up_heap()} count={gc.get_freeze_count()}")


def test_apptest_runs_leave_the_test_process_heap_unfrozen():
    before = gc.get_freeze_count()
    at = AppTest.from_function(_page, default_timeout=60).run()
    assert not at.exception
    assert [block.value for block in at.markdown] == [f"served=False frozen=0 count={before}"]
    assert gc.get_freeze_count() == before
