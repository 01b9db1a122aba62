"""What the Exercises page shows of a real grading: one message for code that does not import, and
every lost point accounted for when a submission is partly wrong (issue 11)."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from grader.api import Grader, load_submission
from tests.corpus.bugs import BUGS


def render(result_json: str, exercise: str) -> None:
    from app_pages.ui.exercise import feedback
    from grader.results import SubmissionResult

    feedback.show_result(SubmissionResult.from_json(result_json), [exercise], {exercise: exercise})


@pytest.fixture(scope="module")
def grading(warm_grader):
    return warm_grader


def shown(grading: Grader, source: str, exercise: str) -> AppTest:
    result = grading.grade(load_submission({f"{exercise}.py": source}, "feedback"), exercises=[exercise])
    at = AppTest.from_function(render, args=(result.to_json(), exercise), default_timeout=60).run()
    assert not at.exception
    return at


def test_code_that_does_not_import_shows_one_message_and_nothing_else(grading):
    at = shown(grading, "import torch\n\ndef apply_rope(x, positions=None, base=10000.0)\n    return x\n", "rope")
    messages = [block.value for block in at.code]
    assert len(messages) == 1 and "SyntaxError on line 3" in messages[0]
    assert not any("not implemented" in block.value for block in at.markdown)
    assert any("did not import" in block.value for block in at.markdown)


def test_a_partly_wrong_submission_shows_where_every_lost_point_went(grading):
    clockwise = next(bug for bug in BUGS if bug.name == "b13_rope_clockwise")
    at = shown(grading, clockwise.source(), "rope")
    score = next(block.value for block in at.markdown if block.value.startswith("**rope:**"))
    got, top = map(float, re.search(r"([\d.]+) / ([\d.]+) points", score).groups())
    visible_lost = sum(
        float(points) - float(earned)
        for earned, points in re.findall(
            r"\*\*Failed:\*\* `[^`]*` · ([\d.]+) / ([\d.]+) points", "\n".join(b.value for b in at.markdown)
        )
    )
    hidden_text = next((block.value for block in at.markdown if block.value.startswith("**Where the other points")), "")
    hidden_lost = sum(float(points) for points in re.findall(r"failed: ([\d.]+) points?", hidden_text))
    assert got < top and visible_lost > 0 and hidden_lost > 0
    assert visible_lost + hidden_lost == top - got  # no point unaccounted for
