"""The Exercises page's store calls: a save that would replace another tab's newer draft can be held
back (the page asks first), and the student's last submission is found whatever its state.

On SQLite and on PostgreSQL (``test_store_support``). Expected values are what each test wrote.
"""

from __future__ import annotations

from test_store_support import TEST_CATALOGUE, store, store_url  # noqa: F401 (fixtures)

FILES = {"rope.py": "x = 1\n"}


def test_a_save_behind_another_tabs_newer_draft_is_held_back_until_asked_to_overwrite(store):
    first = store.save_draft("ann", "rope", "first tab\n", saved_by="tab-1")
    assert (first.draft.revision, first.held_back, first.replaced) == (1, False, None)
    held = store.save_draft("ann", "rope", "second tab\n", saved_by="tab-2", base_revision=0, overwrite_newer=False)
    assert held.held_back and held.draft.code == "first tab\n" and held.draft.revision == 1  # the newer one
    assert store.draft("ann", "rope").code == "first tab\n"  # nothing written
    mine = store.save_draft(
        "ann", "rope", "first tab, again\n", saved_by="tab-1", base_revision=1, overwrite_newer=False
    )  # on the newest revision: written at once
    assert not mine.held_back and mine.draft.revision == 2
    kept = store.save_draft("ann", "rope", "second tab\n", saved_by="tab-2", base_revision=0, overwrite_newer=True)
    assert not kept.held_back and kept.replaced.code == "first tab, again\n" and kept.draft.revision == 3
    assert store.draft("ann", "rope").code == "second tab\n"


def test_the_same_text_saved_from_two_sessions_is_no_conflict(store):
    """A reload restores the text the page before it sent as it went: both saves carry the same text."""
    store.save_draft("ann", "rope", "before\n", saved_by="old-page")
    store.save_draft("ann", "rope", "typed last\n", saved_by="old-page", base_revision=1)
    same = store.save_draft("ann", "rope", "typed last\n", saved_by="new-page", base_revision=1, overwrite_newer=False)
    assert not same.held_back and same.replaced is None and same.draft.revision == 3
    assert store.draft("ann", "rope").code == "typed last\n"


def test_the_latest_grading_job_is_the_students_last_queued_or_settled(store):
    assert store.latest_grading_job("ann") is None
    store.add_grading_job("j1", "ann", FILES, ["rope"], "hidden", "replica-a", 60)
    store.finish_grading_job("j1", {"ok": 1}, [])
    store.add_grading_job("j2", "bob", FILES, ["rope"], "hidden", "replica-a", 60)
    assert store.latest_grading_job("ann").id == "j1" and store.latest_grading_job("ann").status == "done"
    store.add_grading_job("j3", "ann", FILES, ["rope"], "hidden", "replica-a", 60)
    assert store.latest_grading_job("ann").id == "j3" and store.latest_grading_job("ann").pending
    assert store.latest_grading_job("bob").id == "j2"
