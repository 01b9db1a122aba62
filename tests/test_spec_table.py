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

from grader.mutants import list_mutants
from grader.suite import collect, exercise_dir, run_case
from grader.suite.local import LocalStudent
from grader.suite.promises import TABLE, Promise, all_promises
from grader.vocabulary import PromiseKind
from poslab.exercises import EXERCISE_IDS, spec
from poslab.vocabulary import TestStatus


def squeeze(text: str) -> str:
    return " ".join(text.split())


def table_rows() -> list[Promise]:
    return all_promises()


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
    assert {row.exercise for row in rows} == set(EXERCISE_IDS)
    for row in rows:
        assert row.fragments, f"a row of {row.exercise} quotes nothing"
        for fragment in row.fragments:
            assert squeeze(fragment) in squeeze(spec(row.exercise)), (row.exercise, fragment)


def test_every_clause_of_every_spec_has_a_row():
    rows = table_rows()
    for exercise in EXERCISE_IDS:
        fragments = [squeeze(f) for row in rows if row.exercise == exercise for f in row.fragments]
        missing = [clause for clause in clauses(spec(exercise)) if not any(f in clause for f in fragments)]
        assert not missing, f"{exercise}: clauses with no row in its {TABLE}: {missing}"


def test_every_hidden_test_has_a_row_and_every_row_names_real_tests():
    rows = table_rows()
    named = {(row.exercise, label) for row in rows for label in row.tests}
    tests = {(case.exercise, case.name.split(": ", 1)[1]) for case in collect()}
    assert tests - named == set(), f"tests in no row: {sorted(tests - named)}"
    unknown = {(exercise, label) for exercise, label in named - tests if label not in ("none", "every bucket test")}
    assert unknown == set(), f"rows name tests that do not exist: {sorted(unknown)}"


def test_the_clause_reader_finds_bullets_and_formula_lines():
    text = "Title line.\n\n    f(x) -> y\n    y = 2 x\n        for every x\n\nRules:\n- One rule\n  over two lines.\n- Another.\n"
    assert clauses(text) == ["f(x) -> y", "y = 2 x for every x", "- One rule over two lines.", "- Another."]
    assert clauses("T\n\n    a -> b\n    c d,\n    e f\n    g h\n") == ["a -> b", "c d, e f", "g h"]


def test_every_row_says_what_kind_of_promise_it_is():
    kinds = set(PromiseKind)
    for row in table_rows():
        assert row.kind in kinds, (
            f"{row.exercise}: {row.fragments[0]!r} has kind {row.kind!r}, not one of {sorted(kinds)}"
        )
        assert (row.kind == PromiseKind.NOT_GRADED) == (row.tests <= {"none"}), (row.exercise, row.fragments[0])
        if row.kind in (PromiseKind.VALUE, PromiseKind.NOT_GRADED):
            assert not row.mutants, f"{row.exercise}: {row.fragments[0]!r}: value rows name no mutant"
        else:
            assert row.mutants, f"{row.exercise}: the {row.kind} promise {row.fragments[0]!r} names no mutant"


def failing_tests(exercise: str, source: str) -> set[str]:
    student = LocalStudent.from_source(source)
    return {
        case.name.split(": ", 1)[1]
        for case in collect()
        if case.exercise == exercise and run_case(case, student).status != TestStatus.PASSED
    }


def test_each_non_value_promise_has_a_mutant_that_only_its_tests_catch():
    """A row's mutant loses points in that row's tests and in no other test of its exercise: it breaks that
    promise alone, and the promise's tests are the ones that see it. (A slow mutant, a Python loop, is a speed
    row's: ``python -m grader validate`` grades it, through the sandbox.)"""
    mutants = {mutant.name: mutant for mutant in list_mutants()}
    for row in table_rows():
        for name in row.mutants:
            assert name in mutants, f"{row.exercise}: the row {row.fragments[0]!r} names no mutant {name!r}"
            mutant = mutants[name]
            assert mutant.exercise == row.exercise, name
            if mutant.slow:
                assert row.tests == {"speed"}, f"{name} is slow: only a speed row may name it"
                continue
            caught = failing_tests(row.exercise, mutant.source)
            assert caught, f"{name} loses no point"
            assert caught <= row.tests, f"{name} also fails {sorted(caught - row.tests)}, outside its row"


def test_the_kinds_of_every_exercise_name_their_mutants_in_the_catalogue():
    """Every kind but a value is met in the tables, and no named mutant is stale."""
    rows = table_rows()
    assert {row.kind for row in rows} == set(PromiseKind)
    catalogue = {mutant.name for mutant in list_mutants()}
    assert {name for row in rows for name in row.mutants} <= catalogue
