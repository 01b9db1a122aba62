"""The grader's words: each vocabulary once, typed, as ``StrEnum`` members.

A member is also the plain string that ``results.json``, the gradebook and the store hold
(``SubmissionStatus.GRADED == "graded"``), and a stored string reads back as a member
(``SubmissionStatus("graded")``), so old results load as they are. The words the store needs too
(grading modes, job states, attempt kinds, test statuses) are ``poslab.vocabulary``'s; the words of the wire
between the judge and the sandbox (message kinds, finding and note codes) are
``grader.sandboxed.protocol``'s, the one module both sides of the sandbox import.
"""

from __future__ import annotations

from enum import StrEnum


class SubmissionStatus(StrEnum):
    """A whole submission's outcome (``SubmissionResult.status``, the gradebook's ``status``)."""

    GRADED = "graded"  # every file imported; the tests ran
    IMPORT_FAILED = "import_failed"  # a file did not import (the messages say which and why)
    STOPPED_GRADER = "stopped_grader"  # the judges running it died, twice: nothing was graded


class ExerciseStatus(StrEnum):
    """One exercise's outcome within a submission (``SubmissionResult.exercise_status``)."""

    GRADED = "graded"
    DID_NOT_IMPORT = "did_not_import"  # nothing of it ran; one message says why
    NOT_GRADED = "not_graded"  # no tests ran for it (not asked for)


class Visibility(StrEnum):
    """Who sees a test's name and message (Gradescope's words)."""

    VISIBLE = "visible"
    HIDDEN = "hidden"
    AFTER_DUE_DATE = "after_due_date"
    AFTER_PUBLISHED = "after_published"


class Isolation(StrEnum):
    """How a submission's code was kept apart (``SubmissionResult.isolation``)."""

    BWRAP = "bwrap"  # bubblewrap: no network, nothing of the project mounted, its own PID namespace
    FALLBACK = "fallback"  # a plain subprocess with rlimits (see grader/README.md for what it does not guard)
    NONE = "none"  # no code ran in a sandbox: the judges grading it died before any result


class IsolationSetting(StrEnum):
    """``POSLAB_GRADER_ISOLATION``: which isolation to use."""

    AUTO = "auto"  # bubblewrap when it works here, else the fallback
    BWRAP = "bwrap"
    FALLBACK = "fallback"


class WatchState(StrEnum):
    """Where a job is, as the page shows it while a student waits (``JobStatus.state``)."""

    STARTING = "starting"  # no judge is warm yet (about 10 s, once)
    WAITING = "waiting"  # others are ahead of it in the queue
    GRADING = "grading"  # a judge has it
    DONE = "done"  # its result is in
    FAILED = "failed"  # the grader itself broke; a sentence says so

    @property
    def settled(self) -> bool:
        return self in (WatchState.DONE, WatchState.FAILED)


PUBLIC_TEST_FAMILY = "public"  # the property family of every public test (they declare none)
NOT_IMPLEMENTED = (
    "is not implemented yet"  # a test's output when the name it needs is missing or raises NotImplementedError
)


# How a summary names a property family ("hidden tests: 2 about values failed, 4 points").
FAMILY_WORDS = {
    "values": "values",
    "shape": "shape and type",
    "dtype_device": "dtype and device",
    "inputs": "inputs and views",
    "stability": "numerical stability",
    "equivariance": "permutation equivariance",
    "bias": "the bias",
    "relative": "relative positions",
    "breaks_equivariance": "encoding the order",
    "long_sequence": "long sequences",
    "speed": "speed",
    "parameters": "the parameters",
    "length_limit": "the length limit",
    "identity": "position 0",
    "norm": "lengths",
    "half_precision": "half precision",
    "slopes": "the slopes",
    "causality": "the causal mask",
}


def family_words(family: str) -> str:
    return FAMILY_WORDS.get(family, family.replace("_", " ") or "other properties")


class PromiseKind(StrEnum):
    """What kind of promise a clause of an exercise's spec makes (the ``kind`` column of each
    ``grader/suite/<id>/clauses.md``); every kind but a value has a mutant that only its tests catch."""

    VALUE = "value"
    SHAPE_OR_DTYPE = "shape or dtype"
    ERROR = "error"
    BEHAVIOUR = "behaviour"  # what a module registers, how it trains and moves, side effects, speed
    DOMAIN = "domain"  # an argument's whole range, the values the defaults never reach included
    NOT_GRADED = "not graded"  # teaching text, or outputs the spec leaves free
