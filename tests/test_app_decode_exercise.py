"""The seventh exercise in the app: the Exercises page offers it with its spec and starter code, and
Progress has its row and a link that opens it (AppTest)."""

from __future__ import annotations

from poslab.exercises import EXERCISES, get_exercise, spec
from poslab.lessons import all_lessons
from tests.app_harness import go, open_app, progress_texts, sign_in
from tests.conftest import ROOT

DECODE = get_exercise("decode")


def test_the_exercises_page_offers_every_exercise_and_opens_decode_from_the_address(app_env):
    at = open_app()
    at.query_params["exercise"] = "decode"
    at = go(at, "app_pages/exercise.py")
    picker = at.selectbox(key="exercise-pick")
    assert picker.value == "decode" and len(picker.options) == len(EXERCISES) == 8
    assert DECODE.title in picker.options
    assert spec("decode") in [code.value for code in at.code]
    assert spec("decode").startswith((ROOT / "exercises" / "decode.py").read_text().split('"""')[1].strip()[:60])
    assert [item.proto.label for item in at.get("download_button")] == ["Download the starter code (decode.py)"]
    assert any("decode.py" in caption.value for caption in at.caption)


def test_progress_has_a_row_for_decode_with_a_link_that_opens_it(app_env):
    at = go(sign_in(open_app(), "Ada"), "app_pages/progress.py")
    rows = progress_texts(at.main)
    assert len(rows) == len(all_lessons()) + len(EXERCISES)
    assert any(row.startswith(f"{DECODE.title}: 0 attempts") for row in rows), rows
    links = {link.proto.label: link.proto for link in at.get("page_link")}
    assert f"Open {DECODE.title}" in links
