"""What one grading covers, checked: its exercises and its mode. Free of torch, for the processes
that only hand submissions to judges (the grading service's client, ``python -m grader grade``)."""

from __future__ import annotations

from collections.abc import Sequence

from poslab.exercises import EXERCISE_IDS
from poslab.vocabulary import GradingMode


def selected_exercises(exercises: Sequence[str] | None) -> tuple[str, ...]:
    """The exercise ids to grade, in course order; ``ValueError`` names an unknown one."""
    if exercises is None:
        return EXERCISE_IDS
    unknown = sorted(set(exercises) - set(EXERCISE_IDS))
    if unknown or not exercises:
        raise ValueError(f"exercises must be some of {', '.join(EXERCISE_IDS)}; got {', '.join(unknown) or 'none'}")
    return tuple(exercise for exercise in EXERCISE_IDS if exercise in exercises)


def grading_mode(mode: str) -> GradingMode:
    """``mode`` as a ``GradingMode`` (``"hidden"`` reads as ``HIDDEN``); ``ValueError`` names the modes."""
    try:
        return GradingMode(mode)
    except ValueError:
        raise ValueError(f"mode must be one of {', '.join(GradingMode)}, got {mode!r}") from None
