"""A submission's import problems: the order its files are imported in, the sentence a student reads
when one fails, and the outcome of a test that could not run because of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grader.results import TestOutcome
from poslab.exercises import Exercise
from poslab.vocabulary import TestStatus


def import_order(files: Mapping[str, str], exercise: Exercise, skip: Mapping[str, str]) -> list[str]:
    """The exercise's own file first (if present), then the others by name; known-bad files left out."""
    names = sorted(name for name in files if name != "__init__.py" and name not in skip)
    own = [name for name in names if name == exercise.filename]
    return own + [name for name in names if name not in own]


def describe_import_error(filename: str, error: dict) -> str:
    """A sentence a student understands, from the child's (checked) description."""
    kind, message, line, module = error["kind"], error["message"], error["line"], error.get("module", "")
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        return f"{filename} could not be imported: {kind} on line {line}: {message}."
    if kind in ("ModuleNotFoundError", "ImportError") and module.split(".")[0] in ("poslab", "grader"):
        return (
            f"{filename} could not be imported: it imports {module}, the course's own code, which is not "
            f"available when grading. Write the code in your own file instead."
        )
    if kind == "ModuleNotFoundError":
        return (
            f"{filename} could not be imported: it imports {module or 'a module'}, which is not available when grading."
        )
    if kind == "SystemExit":
        return f"{filename} could not be imported: it called sys.exit() while being imported ({message})."
    where = f" (line {line})" if line else ""
    return f"{filename} could not be imported: it raised {kind}{where}: {message}"


def did_not_import(case: Any, import_problems: Mapping[str, str]) -> TestOutcome:
    """A test that did not run because the submission's file did not import (the messages say why)."""
    why = " ".join(problem.rstrip(".") + "." for problem in import_problems.values())
    return TestOutcome(
        case.name,
        case.exercise,
        0.0,
        case.points,
        TestStatus.DID_NOT_IMPORT,
        f"Did not import: {why}",
        case.visibility,
        case.family,
    )
