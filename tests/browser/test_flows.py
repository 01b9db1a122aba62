"""Cases 2 to 5: the causal-mask verdict, a student's submission and progress, a hostile comment,
and the instructor's lock, all in a real browser against a real server, store and sandbox."""

import re

import pytest

from grader.mutants import get_mutant, reference_source
from grader.suite import run_suite
from grader.suite.local import LocalStudent
from poslab.exercises import get_exercise
from tests.browser.app_driver import exception_boxes, go_to, open_app, wait_for_charts, wait_for_run
from tests.browser.conftest import INSTRUCTOR_PASSWORD

GRADING_TIMEOUT_MS = 180_000
HOSTILE_COMMENT = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> '
    "**not bold** [a link](http://example.invalid)"
)


def verdict(page) -> str:
    alerts = page.locator('[data-testid="stAlert"]').filter(has_text="permutation-")
    return alerts.first.inner_text()


def sign_in(page, name: str) -> None:
    page.get_by_role("textbox", name="Your name").fill(name)
    page.get_by_role("button", name="Start").click()
    wait_for_run(page)
    page.get_by_text(f"Studying as {name}").wait_for()


def upload_and_grade(page, filename: str, source: str) -> None:
    tab = page.get_by_role("tab", name="Upload a file")
    if not tab.is_visible():  # the upload is the alternative to the editor, folded under this
        page.get_by_text("Other ways to hand in").click()
    tab.click()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        files=[{"name": filename, "mimeType": "text/x-python", "buffer": source.encode()}]
    )
    page.get_by_role("button", name="Submit the uploaded file for grading").wait_for()
    wait_for_run(page)
    page.get_by_role("button", name="Submit the uploaded file for grading").click()
    wait_for_run(page, timeout_ms=GRADING_TIMEOUT_MS)


def test_toggling_the_causal_mask_flips_the_verdict(page, app_url):
    open_app(page, app_url)
    go_to(page, "The position problem")
    before = verdict(page)
    page.get_by_text("Add a causal mask").click()
    wait_for_run(page)
    after = verdict(page)
    assert "holds" in before and "breaks" in after, (before, after)
    assert not exception_boxes(page) and not page.console_log.errors


def first_failing_visible_test(mutant_name: str):
    """Run the mutant in this (trusted) process to learn which visible test it must fail."""
    mutant = get_mutant(mutant_name)
    outcomes = run_suite(LocalStudent.from_source(mutant.source), exercises=[mutant.exercise])
    failing = [o for o in outcomes if o.visibility == "visible" and o.status == "failed"]
    if not failing:
        pytest.fail(f"mutant {mutant_name} fails no visible test: pick another for this case")
    return mutant, failing[0]


def test_a_student_submits_right_and_wrong_solutions_and_sees_progress(page, app_url):
    exercise = get_exercise("rope")
    open_app(page, app_url)
    sign_in(page, "Grace Hopper")
    go_to(page, "Exercises")
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Exercise").first.click()
    page.get_by_role("option", name=exercise.title).click()
    wait_for_run(page)

    upload_and_grade(page, exercise.filename, reference_source())
    score_line = page.get_by_text(re.compile(rf"{exercise.title}: [\d.]+ / [\d.]+ points")).first
    score_line.wait_for(timeout=GRADING_TIMEOUT_MS)  # the grading service answers while the page polls
    score = score_line.inner_text()
    got, maximum = re.findall(r"[\d.]+", score.split(":")[1])
    assert float(got) == float(maximum) > 0, score

    mutant, failing = first_failing_visible_test("rope_clockwise")
    upload_and_grade(page, exercise.filename, mutant.source)
    shown_message = page.locator('[data-testid="stCode"]').filter(has_text=failing.output.splitlines()[0][:60])
    shown_message.first.wait_for(timeout=GRADING_TIMEOUT_MS)

    go_to(page, "Progress")
    page.get_by_text(f"{exercise.title}:").first.wait_for()
    progress_text = page.locator('[data-testid="stMain"]').inner_text()
    assert f"{float(maximum):g}/{float(maximum):g}" in progress_text.replace(" ", ""), progress_text
    assert not exception_boxes(page) and not page.console_log.errors


def test_a_hostile_comment_is_shown_as_literal_text(page, app_url):
    open_app(page, app_url)
    sign_in(page, "Mallory")
    go_to(page, "ALiBi")
    page.get_by_role("textbox", name="Add a comment (plain text)").fill(HOSTILE_COMMENT)
    page.get_by_role("button", name="Post").click()
    wait_for_run(page)
    shown = page.locator('[data-testid="stMain"]')
    shown.get_by_text("window.__pwned = 1").first.wait_for()
    assert HOSTILE_COMMENT in shown.inner_text().replace("\n", " ")
    assert page.evaluate("() => window.__pwned") is None
    assert shown.locator("strong", has_text="not bold").count() == 0
    assert shown.locator('a[href="http://example.invalid"]').count() == 0
    assert not exception_boxes(page)


def test_the_instructor_page_refuses_a_wrong_password_and_opens_for_the_right_one(page, app_url):
    open_app(page, app_url)
    sign_in(page, "Katherine Johnson")
    go_to(page, "RoPE")  # a visit, so the class table has her row
    go_to(page, "Instructor")
    page.get_by_label("Instructor password", exact=True).fill("not the password")
    page.get_by_role("button", name="Unlock").click()
    wait_for_run(page)
    page.get_by_text("That password is not right.").wait_for()
    assert page.get_by_role("button", name="Lock this page").count() == 0

    page.get_by_label("Instructor password", exact=True).fill(INSTRUCTOR_PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    wait_for_run(page)
    page.get_by_role("button", name="Lock this page").wait_for()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    # The grid fills its (hidden, accessible) cells after the frame appears: wait, don't count once.
    her_row = page.locator('[data-testid="stDataFrame"] [role="gridcell"]').filter(has_text="Katherine Johnson")
    her_row.first.wait_for(state="attached", timeout=20_000)
    undrawn = [chart for chart in wait_for_charts(page) if chart["marks"] == 0 and chart["painted"] == 0]
    assert not undrawn, f"charts that drew nothing: {undrawn}"
    assert not exception_boxes(page) and not page.console_log.errors
