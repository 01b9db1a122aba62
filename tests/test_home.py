"""Home: the course map follows the registry, every lesson has a summary, the page links them all."""

import pytest

from poslab import course_map as home
from poslab.lessons import all_lessons
from tests.app_harness import open_app


def test_course_map_lists_every_lesson_once_in_order():
    stops = [stop for _, group in home.course_map() for stop in group]
    assert [stop.lesson_id for stop in stops] == [lesson.id for lesson in all_lessons()]
    assert [stop.number for stop in stops] == list(range(1, len(stops) + 1))
    assert stops[0].label == f"1. {all_lessons()[0].title}"


def test_groups_keep_course_order():
    groups = [group for group, _ in home.course_map()]
    first_seen = list(dict.fromkeys(lesson.group for lesson in all_lessons()))
    assert groups == first_seen


def test_every_lesson_has_a_one_line_summary():
    for _, stops in home.course_map():
        for stop in stops:
            assert stop.summary and "\n" not in stop.summary, stop.lesson_id


def test_missing_text_block_is_a_key_error():
    with pytest.raises(KeyError, match="no text block"):
        home.home_text("nope")


def test_home_links_every_lesson_and_keeps_a_progress_spot(app_env):
    page = open_app()
    labels = {link.label for link in page.get("page_link")}
    for _, stops in home.course_map():
        for stop in stops:
            assert stop.label in labels
    assert any(block.value.strip() == home.home_text("progress").strip() for block in page.markdown)
    assert "will appear" not in home.home_text("progress")  # a label for what is shown, not a promise
    assert any(link.label.startswith("Start with") for link in page.get("page_link"))


def test_a_students_next_step_replaces_the_start_link_instead_of_repeating_it(app_env):
    page = open_app(student="Ada")
    labels = [link.label for link in page.get("page_link")]
    first = home.course_map()[0][1][0].title
    assert any(label.startswith("Next: ") and first in label for label in labels), labels
    assert not any(label.startswith("Start with") for label in labels), labels


def test_the_three_families_summary_counts_the_methods_it_compares():
    from poslab.viz.families import methods

    words = {4: "four", 5: "five", 6: "six"}
    summary = next(
        stop.summary for _, stops in home.course_map() for stop in stops if stop.lesson_id == "three-families"
    )
    assert f"the {words[len(methods())]} methods" in summary


def test_home_lists_every_exercise_opening_on_its_own_address(app_env):
    from poslab.exercises import EXERCISES

    links = {link.proto.label: link.proto for link in open_app().get("page_link")}
    for exercise in EXERCISES:
        assert links[exercise.title].page == "exercise", exercise.id
        assert links[exercise.title].query_string == f"exercise={exercise.id}"


def test_each_exercise_is_practised_after_a_lesson_whose_footer_links_to_it(lesson_page):
    from poslab.exercises import EXERCISE_IDS, get_exercise

    linked = {lesson.exercise: lesson for lesson in all_lessons() if lesson.exercise is not None}
    assert sorted(linked) == sorted(EXERCISE_IDS)  # every exercise, each from one lesson
    page = lesson_page(linked["rope"].id)
    link = next(link.proto for link in page.get("page_link") if link.proto.label.startswith("Practise it"))
    assert (link.label, link.page, link.query_string) == (
        f"Practise it: {get_exercise('rope').title}",
        "exercise",
        "exercise=rope",
    )
