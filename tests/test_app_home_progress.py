"""Home's progress at a glance, through the whole app and a real store."""

from poslab.lessons import all_lessons
from poslab.store import Store
from tests.app_harness import open_app


def shown_text(at) -> str:
    return (
        " ".join(str(element.value) for element in [*at.caption, *at.markdown, *at.text])
        + " "
        + " ".join(str(bar.proto.text) for bar in at.get("progress"))
    )


def test_without_a_name_home_says_how_to_save_progress(app_env):
    at = open_app()
    assert "Type your name in the sidebar to save your progress and see it here." in shown_text(at)


def test_a_finished_lesson_shows_on_home(app_env):
    Store(app_env).complete_lesson("ada", all_lessons()[0].id)
    at = open_app(student="ada")
    text = shown_text(at)
    assert f"1 of {len(all_lessons())} lessons done" in text, text
