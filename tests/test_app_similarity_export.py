"""The Instructor page's "Similar code" and "Export all code" in AppTest, unlocked, with the roster
of 40 (tests/console_seed.py): a disguised copy among the last submissions is the one pair flagged
and shown side by side; the export's button is there and its action gives the zip."""

from __future__ import annotations

import io
import zipfile

import pytest

from app_pages.ui.instructor.code_export_view import export_all_code
from poslab.roles import Actor, Role
from poslab.store import Store
from poslab.vocabulary import AuditAction
from tests.app_harness import button, go, open_app
from tests.console_seed import key, seed_class
from tests.similarity_material import CORPUS, disguised_copy, exercise_share

PASSWORD = "correct horse"
PAGE = "app_pages/instructor.py"


def rope_of(name: str) -> str:
    return exercise_share((CORPUS / "correct" / f"{name}.py").read_text(encoding="utf-8"), "rope")


@pytest.fixture
def seeded(app_env, monkeypatch) -> Store:
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    store = Store(app_env)
    seed_class(store)  # s01..s05 hand in rope (a line or two each), s06 alibi
    original = rope_of("c06_pytorch_tutorial")
    store.record_attempt(key(10), "rope", 4.0, 4.0, code=original)
    store.record_attempt(key(11), "rope", 4.0, 4.0, code=rope_of("c13_hf_llama_float32"))  # a first attempt...
    store.record_attempt(key(11), "rope", 4.0, 4.0, code=disguised_copy(original, "rope"))  # ...then a copy
    store.record_attempt(key(12), "rope", 4.0, 4.0, code=rope_of("c08_neox_rotary_mpt_alibi"))
    return store


def unlocked():
    at = open_app()
    go(at, PAGE)
    at.main.text_input[0].input(PASSWORD)
    button(at, "Unlock").click().run()
    assert not at.exception and not at.error, [box.value for box in at.error]
    return at


def test_similar_code_flags_the_copy_and_shows_the_pair_side_by_side_and_export_gives_the_zip(seeded):
    at = unlocked()
    assert "Similar code" in [header.value for header in at.header]
    assert "Download all code (zip)" in [item.proto.label for item in at.get("download_button")]
    at.selectbox(key="similarity-exercise").set_value("rope").run()
    assert not at.exception
    pairs = next(frame.value for frame in at.dataframe if "other student" in frame.value.columns)
    assert list(zip(pairs["student"], pairs["other student"])) == [(key(10), key(11))]
    assert any("8 students compared: 1 pair(s) flagged" in box.value for box in at.warning)
    shown = [block.value.strip() for block in at.code]
    original = rope_of("c06_pytorch_tutorial")
    assert shown[-2:] == [original.strip(), disguised_copy(original, "rope").strip()]  # the pair's two columns
    assert any(text.startswith(f"{key(10)}: 100% of this code matches") for text in (item.value for item in at.text))

    archive = zipfile.ZipFile(io.BytesIO(export_all_code(seeded, Actor("ann@example.edu", Role.INSTRUCTOR))))
    assert len([name for name in archive.namelist() if name != "index.csv"]) == 9 + 4  # console_seed's 9, 4 here
    logged = seeded.audit_entries()[0]
    assert (logged.actor, logged.action, logged.target) == ("ann@example.edu", AuditAction.EXPORT, "all code")


def test_an_exercise_with_fewer_than_two_students_says_so(seeded):
    at = unlocked()
    at.selectbox(key="similarity-exercise").set_value("alibi").run()
    assert any("1 student(s) handed in code for this exercise" in caption.value for caption in at.caption)
