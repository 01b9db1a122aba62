"""The exercises: ids, titles and the names each one asks the student to define.

The grader, the store and the app all read this list; its spec and hints come from
``content/exercises.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    names: tuple[str, ...]  # what the submission must define
    filename: str  # the stub a student edits, under exercises/


EXERCISES: tuple[Exercise, ...] = (
    Exercise("attention", "Scaled dot-product attention", ("attention",), "attention.py"),
    Exercise("sinusoidal", "Sinusoidal encoding", ("sinusoidal_encoding",), "sinusoidal.py"),
    Exercise("learned", "Learned positional embedding", ("LearnedPositionalEmbedding",), "learned.py"),
    Exercise("rope", "Rotary position embedding", ("apply_rope",), "rope.py"),
    Exercise("alibi", "ALiBi slopes and bias", ("alibi_slopes", "alibi_bias"), "alibi.py"),
)

EXERCISE_IDS: tuple[str, ...] = tuple(exercise.id for exercise in EXERCISES)


def get_exercise(exercise_id: str) -> Exercise:
    for exercise in EXERCISES:
        if exercise.id == exercise_id:
            return exercise
    raise KeyError(f"unknown exercise {exercise_id!r}; known: {', '.join(EXERCISE_IDS)}")
