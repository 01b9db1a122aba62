"""Tables of the progress store as they are at the head revision (``alembic/versions`` made them).

Most tables are events: each visit, answer, hint, attempt and comment is a row of its own,
written once and never updated (a comment may be deleted by its id; a regrade changes the kind of
the submission it supersedes once, from ``submission`` to ``superseded``, naming the kind it
expects, and keeps its score), so concurrent writers never update the same row and progress is
computed from the rows when read. Two tables are updated in place, each under a rule that keeps
concurrent writers apart:

* ``drafts``: one row per student and exercise, overwritten at each save; the last save wins, and
  a revision counts the saves so a tab can tell that another saved after it;
* ``grading_jobs``: a job's status, lease and result change as it is graded; every update names
  the state it expects (``queued``), so a job is finished once and claimed by one replica.

The roster, sign-in links and sessions and the password limit are in ``signin_schema``, the
instructor's extensions in ``extensions``, scores set by hand in ``overrides``, the audit log in
``audit``; every
table shares ``columns.metadata``. A change here is made in the database by a new revision
(``docs/store.md``); a test holds the tables here to what the revisions make.
"""

from __future__ import annotations

import sqlalchemy as sa

from poslab.vocabulary import AttemptKind, JobState

from . import audit, extensions, overrides, signin_schema  # noqa: F401 (their tables join the metadata: every table is known here)
from .columns import ID_CHARS, UtcDateTime, metadata  # noqa: F401 (re-exported: schema.UtcDateTime)
from .validation import MAX_COMMENT_CHARS, MAX_NAME_CHARS, MAX_TEST_NAME_CHARS


def _event_table(name: str, *columns: sa.Column | sa.Constraint) -> sa.Table:
    """A table of events: id, student, time, then its own columns."""
    return sa.Table(
        name,
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
        sa.Column("at", UtcDateTime, nullable=False),
        *columns,
    )


visits = _event_table("visits", sa.Column("lesson", sa.String(ID_CHARS), nullable=False))

lesson_completions = _event_table("lesson_completions", sa.Column("lesson", sa.String(ID_CHARS), nullable=False))

check_answers = _event_table(
    "check_answers",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False),
    sa.Column("check_id", sa.String(ID_CHARS), nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
)

hints = _event_table(
    "hints",
    sa.Column("exercise", sa.String(ID_CHARS), nullable=False),
    sa.Column("tier", sa.Integer, nullable=False),
    sa.CheckConstraint("tier >= 1", name="hint_tier_positive"),
)

attempts = _event_table(
    "attempts",
    sa.Column("exercise", sa.String(ID_CHARS), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("public_tests_only", sa.Boolean, nullable=False),
    sa.Column("details", sa.Text, nullable=True),  # the grader's result as JSON text
    sa.Column("code", sa.Text, nullable=True),
    # A second guard behind validation: a score outside its range is never stored.
    sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="score_in_range"),
    # Handed in, or a practice run (revision 0005; AttemptKind): only submissions count.
    sa.Column("kind", sa.String(16), nullable=False, server_default=AttemptKind.SUBMISSION.value),
    # A regrade's attempt names the one it superseded (revision 0008): that one's kind became SUPERSEDED.
    sa.Column("regrade_of", sa.Integer, sa.ForeignKey("attempts.id"), nullable=True, index=True),
)

comments = _event_table(
    "comments",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False, index=True),
    sa.Column("text", sa.String(MAX_COMMENT_CHARS), nullable=False),
)

# One row per test that ran in an attempt, as handed to its writer: pass rates are counted
# from these, never read out of the grader's details.
attempt_tests = sa.Table(
    "attempt_tests",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("attempt_id", sa.Integer, sa.ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("test", sa.String(MAX_TEST_NAME_CHARS), nullable=False),
    sa.Column("passed", sa.Boolean, nullable=False),
)

# Submissions handed to the grading service (grader.service), recorded before they are dispatched so
# that none is lost when the app stops; a job is held by one service replica at a time (a lease).
PENDING_JOB_STATUS = JobState.QUEUED.value
grading_jobs = sa.Table(
    "grading_jobs",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
    sa.Column("at", UtcDateTime, nullable=False, index=True),  # submitted
    sa.Column("mode", sa.String(16), nullable=False),  # a GradingMode
    sa.Column("exercises", sa.Text, nullable=False),  # JSON list of exercise ids
    sa.Column("files", sa.Text, nullable=False),  # JSON {file name: source}
    sa.Column("status", sa.String(16), nullable=False),  # a JobState
    sa.Column("lease_holder", sa.String(128), nullable=True),
    sa.Column("lease_until", UtcDateTime, nullable=True),
    sa.Column("result", sa.Text, nullable=True),  # the grader's SubmissionResult as JSON
    sa.Column("message", sa.Text, nullable=True),  # why it failed, in a sentence
    sa.Column("finished_at", UtcDateTime, nullable=True),
    # One pending submission per student, enforced by the database too (replicas race otherwise).
    sa.Index(
        "one_pending_job_per_student",
        "student",
        unique=True,
        sqlite_where=sa.text(f"status = '{PENDING_JOB_STATUS}'"),
        postgresql_where=sa.text(f"status = '{PENDING_JOB_STATUS}'"),
    ),
)


# The student's workspace (the Exercises page): one draft per student and exercise (the runs of
# the public tests are attempts of their own kind) and which option each quick-check answer
# chose. A draft's row is updated at each save: a draft is saved every few seconds of typing, and
# keeping every save would fill the database with near-copies. A revision counts the saves, so a tab can tell that another tab saved after it.
drafts = sa.Table(
    "drafts",
    metadata,
    sa.Column("student", sa.String(MAX_NAME_CHARS), primary_key=True),
    sa.Column("exercise", sa.String(ID_CHARS), primary_key=True),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("saved_at", UtcDateTime, nullable=False),
    sa.Column("saved_by", sa.String(ID_CHARS), nullable=False),  # the browser session (tab) that saved it
)

check_choices = _event_table(
    "check_choices",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False),
    sa.Column("check_id", sa.String(ID_CHARS), nullable=False),
    sa.Column("choice", sa.Integer, nullable=False),
    sa.CheckConstraint("choice >= 0", name="check_choice_not_negative"),
)
