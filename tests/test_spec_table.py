"""Each exercise's table of spec clauses and the hidden tests that check them
(``grader/suite/<id>/clauses.md``) is complete.

* every row quotes its exercise's spec (each `fragment` occurs in the spec's text);
* every clause of every spec (each bullet, each line of the formula blocks, with the lines that
  continue it) contains a quoted fragment of a row;
* every hidden test appears in a row of its exercise, and every test a row names exists.

A new exercise fails here until its clauses and tests are in its table.
"""

from __future__ import annotations

import re

from grader.suite import collect, exercise_dir
from poslab.exercises import EXERCISE_IDS, spec

TABLE = "clauses.md"


def squeeze(text: str) -> str:
    return " ".join(text.split())


def table_rows() -> list[tuple[str, list[str], set[str]]]:
    """(exercise, quoted fragments, test labels) per row of every exercise's table."""
    rows = []
    for exercise in EXERCISE_IDS:
        for line in (exercise_dir(exercise) / TABLE).read_text(encoding="utf-8").splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")] if line.startswith("| ") else []
            if len(cells) != 2 or cells[0] in ("clause", "---"):
                continue
            names = re.sub(r"\([^)]*\)", "", cells[1])  # notes in parentheses may hold commas
            labels = {label.strip() for label in names.split(",") if label.strip()}
            rows.append((exercise, re.findall(r"`([^`]+)`", cells[0]), labels))
    return rows


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def clauses(text: str) -> list[str]:
    """The spec's clauses: each bullet, each formula line, with the lines that continue it (more
    indented and not a formula of their own, or after a line that ends with a comma)."""
    items: list[list[str]] = []
    paragraphs = re.split(r"\n\s*\n", text.strip())
    for paragraph in paragraphs[1:]:  # the first paragraph is the title
        start_indent, previous = None, ""
        for line in paragraph.splitlines():
            stripped = line.strip()
            if _indent(line) == 0 and stripped.endswith(":") and not stripped.startswith("- "):
                start_indent, previous = None, ""
                continue  # "Rules:", "Accepted layouts (...):"
            defines = " = " in stripped or " -> " in stripped  # a formula line is a clause of its own
            in_bullet = bool(items) and items[-1][0].startswith("- ") and _indent(line) > (start_indent or 0)
            continues = (
                start_indent is not None
                and not stripped.startswith("- ")
                and (in_bullet or (not defines and (_indent(line) > start_indent or previous.rstrip().endswith(","))))
            )
            if continues:
                items[-1].append(stripped)
            else:
                items.append([stripped])
                start_indent = _indent(line)
            previous = stripped
    return [squeeze(" ".join(item)) for item in items]


def test_every_row_quotes_its_spec():
    rows = table_rows()
    assert {exercise for exercise, _, _ in rows} == set(EXERCISE_IDS)
    for exercise, fragments, _ in rows:
        assert fragments, f"a row of {exercise} quotes nothing"
        for fragment in fragments:
            assert squeeze(fragment) in squeeze(spec(exercise)), (exercise, fragment)


def test_every_clause_of_every_spec_has_a_row():
    rows = table_rows()
    for exercise in EXERCISE_IDS:
        fragments = [squeeze(f) for row_exercise, quoted, _ in rows if row_exercise == exercise for f in quoted]
        missing = [clause for clause in clauses(spec(exercise)) if not any(f in clause for f in fragments)]
        assert not missing, f"{exercise}: clauses with no row in its {TABLE}: {missing}"


def test_every_hidden_test_has_a_row_and_every_row_names_real_tests():
    rows = table_rows()
    named = {(exercise, label) for exercise, _, labels in rows for label in labels}
    tests = {(case.exercise, case.name.split(": ", 1)[1]) for case in collect()}
    assert tests - named == set(), f"tests in no row: {sorted(tests - named)}"
    unknown = {(exercise, label) for exercise, label in named - tests if label not in ("none", "every bucket test")}
    assert unknown == set(), f"rows name tests that do not exist: {sorted(unknown)}"


def test_the_clause_reader_finds_bullets_and_formula_lines():
    text = "Title line.\n\n    f(x) -> y\n    y = 2 x\n        for every x\n\nRules:\n- One rule\n  over two lines.\n- Another.\n"
    assert clauses(text) == ["f(x) -> y", "y = 2 x for every x", "- One rule over two lines.", "- Another."]
    assert clauses("T\n\n    a -> b\n    c d,\n    e f\n    g h\n") == ["a -> b", "c d, e f", "g h"]
