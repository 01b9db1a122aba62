"""The words of grading that the store keeps and the grader writes: each vocabulary once, typed.

They are ``StrEnum`` members, so each is also the plain string that JSON and the database hold
(``JobState.QUEUED == "queued"``), and a stored string reads back as a member
(``JobState("queued")``). ``poslab`` imports neither the grader nor the app, so the words both
the store and the grader use live here and the grader imports them (the grader's own words, such
as a result's status, are in ``grader.vocabulary``).
"""

from __future__ import annotations

from enum import StrEnum


class GradingMode(StrEnum):
    """Which tests judge a submission."""

    HIDDEN = "hidden"  # the hidden suite, run in the judge: a grade
    PUBLIC = "public"  # the public tests exercises/test_*.py, run inside the sandbox: feedback only


class JobState(StrEnum):
    """A grading job's state in the store (``grading_jobs.status``)."""

    QUEUED = "queued"  # recorded, waiting for its result (the only state a job leaves)
    DONE = "done"  # graded: the result and its attempts are recorded
    FAILED = "failed"  # the grader itself broke: a sentence says so, nothing is graded


class TestStatus(StrEnum):
    """One test's outcome (``TestOutcome.status``; ``results.json``'s ``extra_data.statuses``; the
    per-test rows of the attempts stored before version 3 are read from it)."""

    __test__ = False  # not a pytest class

    PASSED = "passed"
    FAILED = "failed"
    DID_NOT_IMPORT = "did_not_import"  # not run: its exercise's file did not import (counts in no pass rate)


class AttemptKind(StrEnum):
    """Why a grading of one exercise was kept (``attempts.kind``)."""

    SUBMISSION = "submission"  # handed in: it counts (progress, the grade, the per-test pass rates)
    PRACTICE = "practice"  # a run of the public tests on the draft: feedback, never counted
    SUPERSEDED = "superseded"  # a submission a regrade replaced (``attempts.regrade_of`` names it): history only


class AuditAction(StrEnum):
    """What an instructor or a TA did, as the audit log keeps it (``audit_log.action``)."""

    ISSUE_LINKS = "issue_links"  # new sign-in links (a re-issue withdraws the earlier ones)
    WITHDRAW_LINKS = "withdraw_links"
    END_SIGN_INS = "end_sign_ins"
    ROSTER = "roster"  # the roster replaced or removed
    EXTENSION = "extension"  # an extension granted
    WITHDRAW_EXTENSION = "withdraw_extension"
    OVERRIDE = "override"  # a student's exercise score set by hand
    CLEAR_OVERRIDE = "clear_override"
    REGRADE = "regrade"
    DELETE_COMMENT = "delete_comment"
    EXPORT = "export"  # the class's code, or its grades, taken out of the app
