"""The permutation helper and the lesson registry every page reads."""

import pytest
import torch

from poslab.lessons import all_lessons, get_lesson, lesson_ids, neighbours
from poslab.permutation import check_order, permutation_matrix

ISSUE_LESSON_IDS = {
    "position-problem",
    "three-families",
    "sinusoidal",
    "learned",
    "rope",
    "alibi",
    "context-extension",
    "extrapolation",
    "code",
    "links",
    "relative-bias",
    "rope-base",
    "long-context",
    "attention-temperature",
    "hybrid-schemes",
    "extension-production",
    "inference-engine",
    "engines-in-practice",
    "precision",
    "positions-2d-3d",
}


def test_permutation_matrix_reorders_rows():
    x = torch.arange(12.0).reshape(4, 3)
    order = (2, 0, 3, 1)
    assert torch.equal(permutation_matrix(order) @ x, x[list(order)])


@pytest.mark.parametrize(
    "order, n, message",
    [((0, 1), 3, "needs 3"), ((0, 0, 1), 3, "repeated: \\[0\\]"), ((0, 1, 3), 3, "missing: \\[2\\]")],
)
def test_bad_orders_are_explained(order, n, message):
    with pytest.raises(ValueError, match=message):
        check_order(order, n)


def test_registry_has_every_lesson_once_with_a_page(root):
    assert set(lesson_ids()) == ISSUE_LESSON_IDS and len(lesson_ids()) == len(ISSUE_LESSON_IDS)
    for lesson in all_lessons():
        assert (root / lesson.page_path).is_file(), lesson.page_path


def test_neighbours_walk_the_course_in_order():
    lessons = all_lessons()
    assert neighbours(lessons[0].id)[0] is None and neighbours(lessons[-1].id)[1] is None
    for before, after in zip(lessons, lessons[1:]):
        assert neighbours(before.id)[1] == after and neighbours(after.id)[0] == before


def test_every_quick_check_has_one_right_answer_and_feedback_for_each_option():
    for lesson in all_lessons():
        for check in lesson.checks:
            assert sum(option.correct for option in check.options) == 1
            assert all(option.feedback.strip() for option in check.options)


def test_unknown_lesson_is_a_key_error():
    with pytest.raises(KeyError, match="unknown lesson"):
        get_lesson("no-such-lesson")
