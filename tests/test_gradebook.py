"""grader.gradebook: reading what `python -m grader grade --out DIR` writes."""

import csv
import json

import pytest

from grader.gradebook import GradebookError, load_gradebook
from grader.results import GRADEBOOK_HEADER, SubmissionResult, TestOutcome


def result(submission_id, rope_passes: bool, alibi_passes: bool) -> SubmissionResult:
    tests = (
        TestOutcome(
            "rope: relative",
            "rope",
            3.0 if rope_passes else 0.0,
            3.0,
            "passed" if rope_passes else "failed",
            "",
            "hidden",
        ),
        TestOutcome(
            "alibi: slopes",
            "alibi",
            1.0 if alibi_passes else 0.0,
            1.0,
            "passed" if alibi_passes else "failed",
            "",
            "visible",
        ),
    )
    return SubmissionResult(submission_id, "graded", tests, "bwrap", False, "h", "s", "0", 1.0)


def write_gradebook(folder, results, broken=()):
    with open(folder / "gradebook.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(GRADEBOOK_HEADER)
        for item in results:
            writer.writerow(item.gradebook_row())
    for item in results:
        (folder / item.submission_id).mkdir()
        text = "{not json" if item.submission_id in broken else json.dumps(item.to_gradescope())
        (folder / item.submission_id / "results.json").write_text(text)


def test_the_table_gets_a_percentage_and_pass_rates_count_each_test(tmp_path):
    write_gradebook(tmp_path, [result("ann", True, False), result("bob", False, False), result("cy", True, True)])
    book = load_gradebook(tmp_path)
    assert list(book.table["id"]) == ["ann", "bob", "cy"]
    assert list(book.table["percent"]) == pytest.approx([75.0, 0.0, 100.0])  # 3 of 4, 0 of 4, 4 of 4
    rates = book.pass_rates.set_index("test")
    assert rates.loc["alibi: slopes", "pass_rate"] == pytest.approx(1 / 3)
    assert rates.loc["rope: relative", "pass_rate"] == pytest.approx(2 / 3)
    assert list(book.pass_rates["test"]) == ["alibi: slopes", "rope: relative"]  # most failed first
    assert book.problems == ()


def test_a_broken_results_file_is_skipped_and_named(tmp_path):
    write_gradebook(tmp_path, [result("ann", True, True), result("bob", False, False)], broken={"bob"})
    book = load_gradebook(tmp_path)
    assert len(book.table) == 2 and set(book.pass_rates["n"]) == {1}
    assert len(book.problems) == 1 and book.problems[0].startswith("bob/results.json was skipped")


def test_ids_that_are_paths_are_not_followed(tmp_path):
    (tmp_path / "gradebook.csv").write_text("id,status,total,max\n../../etc,graded,1,2\n")
    book = load_gradebook(tmp_path)
    assert "not a plain folder name" in book.problems[0] and book.pass_rates.empty


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda folder: None, "has no gradebook.csv"),
        (lambda folder: (folder / "gradebook.csv").write_text("name,score\nann,1\n"), "lacks the column"),
    ],
)
def test_a_folder_that_is_not_a_gradebook_says_so(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(GradebookError, match=message):
        load_gradebook(tmp_path)


def test_a_missing_folder_says_so(tmp_path):
    with pytest.raises(GradebookError, match="There is no folder"):
        load_gradebook(tmp_path / "nope")
