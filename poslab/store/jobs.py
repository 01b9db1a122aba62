"""The grading service's jobs in the store: recorded before grading, finished exactly once.

A job is a submission handed to ``grader.service``: who, when, its files, which exercises, and
its state (``JobState``: queued until the service writes the result, then done or failed). The
service replica that dispatched it holds a lease (``lease_holder`` until ``lease_until``) and
renews it while it waits; a job whose lease ran out belongs to a replica that stopped, and
another replica (or the next start) claims it and grades it again. Finishing a job records its
attempts in the same transaction (``attempts.insert_attempt``), and only if the job was still
queued: a job graded twice (a replica that was only slow) is recorded once.

``GradingJobsMixin`` is mixed into ``Store``; it uses the store's transactions and validation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import IntegrityError

from poslab.vocabulary import AttemptKind, GradingMode, JobState

from . import schema
from .attempts import AttemptToRecord, checked_attempt, insert_attempt
from .validation import clean_code, clean_student, details_to_json

QUEUED = JobState.QUEUED
MAX_HOLDER_CHARS = 128
__all__ = ["AttemptToRecord", "GradingJobRecord", "GradingJobsMixin", "PendingJobExists"]


class PendingJobExists(ValueError):
    """The student already has a submission waiting for its result (one at a time)."""

    def __init__(self, job: GradingJobRecord) -> None:
        super().__init__(
            f"You already have a submission being graded (handed in at {job.submitted_at:%H:%M:%S} UTC). "
            "Its result appears here in a few seconds; submit again once it has."
        )
        self.job = job


@dataclass(frozen=True)
class GradingJobRecord:
    id: str
    student: str
    submitted_at: datetime
    mode: GradingMode
    exercises: tuple[str, ...]
    files: dict[str, str]
    status: JobState
    lease_holder: str | None
    lease_until: datetime | None
    result: dict | None  # SubmissionResult.to_dict() once done
    message: str | None  # why it failed
    finished_at: datetime | None

    @property
    def pending(self) -> bool:
        return self.status == QUEUED


def _now() -> datetime:
    return datetime.now(UTC)


def _record(row: Row) -> GradingJobRecord:
    return GradingJobRecord(
        id=row.id,
        student=row.student,
        submitted_at=row.at,
        mode=GradingMode(row.mode),
        exercises=tuple(json.loads(row.exercises)),
        files=json.loads(row.files),
        status=JobState(row.status),
        lease_holder=row.lease_holder,
        lease_until=row.lease_until,
        result=None if row.result is None else json.loads(row.result),
        message=row.message,
        finished_at=row.finished_at,
    )


def _holder(holder: str) -> str:
    if not isinstance(holder, str) or not 0 < len(holder) <= MAX_HOLDER_CHARS:
        raise ValueError(f"a lease holder is 1 to {MAX_HOLDER_CHARS} characters, got {holder!r}")
    return holder


class GradingJobsMixin:
    """Store methods of the grading service (``Store`` provides ``_read``, ``_write`` and ``catalogue``)."""

    def add_grading_job(
        self,
        job_id: str,
        student: str,
        files: Mapping[str, str],
        exercises: Sequence[str],
        mode: GradingMode,
        holder: str,
        lease_seconds: float,
    ) -> GradingJobRecord:
        """Record a submission as queued and held by ``holder``; ``PendingJobExists`` if the student
        already has one queued."""
        student = clean_student(student)
        exercises = [self.catalogue.require_exercise(exercise) for exercise in exercises]
        files_json = json.dumps(dict(files), sort_keys=True)
        clean_code(files_json)  # the store's size limit for code, on all the files together
        table = schema.grading_jobs
        now = _now()
        values = dict(
            id=job_id,
            student=student,
            at=now,
            mode=GradingMode(mode),
            exercises=json.dumps(exercises),
            files=files_json,
            status=QUEUED,
            lease_holder=_holder(holder),
            lease_until=now + timedelta(seconds=lease_seconds),
        )

        def add(conn: Connection) -> Row | None:
            pending = conn.execute(sa.select(table).where(table.c.student == student, table.c.status == QUEUED)).first()
            if pending is not None:
                return pending
            conn.execute(sa.insert(table).values(**values))
            return None

        try:
            pending = self._write(add)
        except IntegrityError:  # another replica inserted one between our check and our insert
            pending = self._read(
                lambda conn: conn.execute(
                    sa.select(table).where(table.c.student == student, table.c.status == QUEUED)
                ).first()
            )
        if pending is not None:
            raise PendingJobExists(_record(pending))
        return self.grading_job(job_id)

    def grading_job(self, job_id: str) -> GradingJobRecord:
        """One job; ``KeyError`` if there is none with this id."""
        table = schema.grading_jobs
        row = self._read(lambda conn: conn.execute(sa.select(table).where(table.c.id == job_id)).first())
        if row is None:
            raise KeyError(f"no grading job with id {job_id!r}")
        return _record(row)

    def grading_jobs(self, student: str | None = None, status: JobState | None = None) -> tuple[GradingJobRecord, ...]:
        """Jobs in the order they were handed in, optionally one student's or of one status."""
        table = schema.grading_jobs
        query = sa.select(table).order_by(table.c.at, table.c.id)
        if student is not None:
            query = query.where(table.c.student == clean_student(student))
        if status is not None:
            query = query.where(table.c.status == JobState(status))
        return tuple(_record(row) for row in self._read(lambda conn: conn.execute(query).all()))

    def latest_grading_job(self, student: str, exercise: str | None = None) -> GradingJobRecord | None:
        """The student's last submission (of ``exercise``, if given), queued or settled (the page shows its
        result after a reload)."""
        table = schema.grading_jobs
        query = sa.select(table).where(table.c.student == clean_student(student))
        if exercise is not None:  # the column is a JSON list of catalogue ids: '["rope", "decode"]'
            query = query.where(table.c.exercises.contains(json.dumps(exercise), autoescape=True))
        query = query.order_by(table.c.at.desc(), table.c.id.desc()).limit(1)
        row = self._read(lambda conn: conn.execute(query).first())
        return None if row is None else _record(row)

    def jobs_ahead(self, job_id: str) -> int:
        """Queued jobs handed in before this one (all replicas share the queue)."""
        table = schema.grading_jobs
        job = self.grading_job(job_id)
        query = sa.select(sa.func.count()).where(
            table.c.status == QUEUED,
            sa.or_(table.c.at < job.submitted_at, sa.and_(table.c.at == job.submitted_at, table.c.id < job.id)),
        )
        return self._read(lambda conn: conn.execute(query).scalar_one())

    def renew_leases(self, holder: str, job_ids: Iterable[str], lease_seconds: float) -> None:
        ids = list(job_ids)
        if not ids:
            return
        table = schema.grading_jobs
        statement = (
            sa.update(table)
            .where(table.c.id.in_(ids), table.c.lease_holder == _holder(holder), table.c.status == QUEUED)
            .values(lease_until=_now() + timedelta(seconds=lease_seconds))
        )
        self._write(lambda conn: conn.execute(statement))

    def release_leases(self, holder: str) -> None:
        """Let any replica take this holder's queued jobs now (the holder is stopping)."""
        table = schema.grading_jobs
        statement = (
            sa.update(table)
            .where(table.c.lease_holder == _holder(holder), table.c.status == QUEUED)
            .values(lease_until=_now())
        )
        self._write(lambda conn: conn.execute(statement))

    def queued_job_holders(self) -> tuple[str, ...]:
        """The replicas holding queued jobs (to tell the ones known to be gone)."""
        table = schema.grading_jobs
        query = sa.select(table.c.lease_holder).where(table.c.status == QUEUED, table.c.lease_holder.is_not(None))
        return tuple(sorted(set(self._read(lambda conn: conn.execute(query.distinct()).scalars().all()))))

    def claim_abandoned_jobs(
        self, holder: str, lease_seconds: float, stopped_holders: Iterable[str] = ()
    ) -> tuple[GradingJobRecord, ...]:
        """Take the queued jobs whose lease ran out, or whose holder is known to have stopped (a replica
        killed on this machine), oldest first."""
        holder = _holder(holder)
        stopped = [_holder(name) for name in stopped_holders]
        table = schema.grading_jobs

        def claim(conn: Connection) -> list[str]:
            now = _now()
            ran_out = sa.or_(table.c.lease_until.is_(None), table.c.lease_until <= now)
            if stopped:
                ran_out = sa.or_(ran_out, table.c.lease_holder.in_(stopped))
            expired = sa.and_(table.c.status == QUEUED, ran_out)
            candidates = conn.execute(sa.select(table.c.id).where(expired).order_by(table.c.at, table.c.id)).scalars()
            claimed = []
            for job_id in list(candidates):
                # The condition again: under PostgreSQL another replica may have claimed it since.
                taken = conn.execute(
                    sa.update(table)
                    .where(table.c.id == job_id, expired)
                    .values(lease_holder=holder, lease_until=now + timedelta(seconds=lease_seconds))
                ).rowcount
                if taken:
                    claimed.append(job_id)
            return claimed

        return tuple(self.grading_job(job_id) for job_id in self._write(claim))

    def finish_grading_job(self, job_id: str, result: dict, attempts: Sequence[AttemptToRecord]) -> bool:
        """Mark the job done with its result and record its attempts, once: False if it was not queued."""
        table = schema.grading_jobs
        result_json = details_to_json(result)
        checked = [checked_attempt(attempt, AttemptKind.SUBMISSION, self.catalogue) for attempt in attempts]

        def finish(conn: Connection) -> bool:
            now = _now()
            finished = conn.execute(
                sa.update(table)
                .where(table.c.id == job_id, table.c.status == QUEUED)
                .values(status=JobState.DONE, result=result_json, finished_at=now, lease_until=None)
            ).rowcount
            if not finished:
                return False
            student = conn.execute(sa.select(table.c.student).where(table.c.id == job_id)).scalar_one()
            for attempt in checked:
                insert_attempt(conn, student, attempt, now)
            return True

        return self._write(finish)

    def fail_grading_job(self, job_id: str, message: str) -> bool:
        """Mark the job failed (the grader itself broke), once; the message is shown to the student."""
        table = schema.grading_jobs
        statement = (
            sa.update(table)
            .where(table.c.id == job_id, table.c.status == QUEUED)
            .values(status=JobState.FAILED, message=str(message)[:2000], finished_at=_now(), lease_until=None)
        )
        return bool(self._write(lambda conn: conn.execute(statement).rowcount))
