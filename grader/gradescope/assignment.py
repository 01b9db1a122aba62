"""On Gradescope, a package built with ``--assignment ID`` grades that assignment's exercises and
scores the assignment's total: late by the submission's ``created_at`` against the due date
(extensions by email or SID), as ``poslab.deadlines`` counts it."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING

from grader.results import SubmissionResult
from poslab.assignments import Assignment, Course, load_assignments
from poslab.deadlines import AssignmentGrade, Attempt, grade_assignment, student_due

if TYPE_CHECKING:
    from grader.gradescope.run import GradescopePaths

ASSIGNMENT_FILES = ("assignments.toml", "assignment-id.txt")  # in source/, with --assignment ID


def chosen_assignment(paths: GradescopePaths) -> tuple[Assignment, Course] | None:
    """The assignment the package was built for (``--assignment ID``), or None."""
    course_file, chosen = (paths.source / name for name in ASSIGNMENT_FILES)
    if not chosen.is_file():
        return None
    course = load_assignments(course_file)
    return course.get(chosen.read_text(encoding="utf-8").strip()), course


def counted(
    paths: GradescopePaths, result: SubmissionResult, assignment: Assignment, course: Course
) -> AssignmentGrade:
    """The result counted for the assignment, late by Gradescope's ``created_at``; extensions by email or SID."""
    try:
        metadata = json.loads((paths.root / "submission_metadata.json").read_text(encoding="utf-8"))
        created = datetime.fromisoformat(str(metadata["created_at"]))
        users = [user for user in metadata.get("users") or () if isinstance(user, dict)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        created, users = None, []
    keys = [str(user.get(field) or "").strip().lower() for user in users for field in ("email", "sid")]
    attempts = [
        Attempt(exercise, score.score / score.max_score, created)
        for exercise, score in result.exercises.items()
        if score.max_score > 0
    ]
    return grade_assignment(assignment, attempts, student_due(assignment, keys, course.extensions))


def with_assignment(text: str, grade: AssignmentGrade) -> str:
    """The results with the assignment's total as Gradescope's score, and what it counted first in the output."""
    data = json.loads(text)
    data["score"] = grade.total
    late = " Late." if grade.late else ""
    data["output"] = f"{grade.assignment}: {grade.summary()}.{late} " + data.get("output", "")
    data["extra_data"]["assignment"] = {"id": grade.assignment, "total": grade.total, "max": grade.max_points}
    return json.dumps(data, indent=1) + "\n"
