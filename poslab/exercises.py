"""The exercises: ids, titles and the names each one asks the student to define.

The grader, the store and the app all read this list; its spec and hints come from
``content/exercises.toml``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CONTENT_FILE = Path(__file__).parent / "content" / "exercises.toml"
HINT_TIERS: tuple[str, ...] = ("concept", "formula", "skeleton")  # the order the app reveals them in


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    names: tuple[str, ...]  # what the submission must define
    filename: str  # the stub a student edits, under exercises/

    @property
    def reference_file(self) -> str:
        """Its reference module under poslab/encodings/ (importing only those of earlier exercises)."""
        return f"{self.id}.py"


EXERCISES: tuple[Exercise, ...] = (
    Exercise("attention", "Scaled dot-product attention", ("attention",), "attention.py"),
    Exercise("sinusoidal", "Sinusoidal encoding", ("sinusoidal_encoding",), "sinusoidal.py"),
    Exercise("learned", "Learned positional embedding", ("LearnedPositionalEmbedding",), "learned.py"),
    Exercise("rope", "Rotary position embedding", ("apply_rope",), "rope.py"),
    Exercise("alibi", "ALiBi slopes and bias", ("alibi_slopes", "alibi_bias"), "alibi.py"),
    Exercise("t5", "T5 relative buckets", ("t5_relative_bucket", "t5_relative_bias"), "t5.py"),
    Exercise("decode", "Decoding with a KV cache", ("decode",), "decode.py"),
    Exercise("extend", "Stretch RoPE to a longer context", ("scaled_inv_freq",), "extend.py"),
)

EXERCISE_IDS: tuple[str, ...] = tuple(exercise.id for exercise in EXERCISES)


def get_exercise(exercise_id: str) -> Exercise:
    for exercise in EXERCISES:
        if exercise.id == exercise_id:
            return exercise
    raise KeyError(f"unknown exercise {exercise_id!r}; known: {', '.join(EXERCISE_IDS)}")


@dataclass(frozen=True)
class ExerciseText:
    spec: str
    hints: tuple[str, ...]  # in HINT_TIERS order


def _load_text(raw: dict, exercise_id: str) -> ExerciseText:
    hints = raw.get("hints", {})
    missing = [] if raw.get("spec", "").strip() else ["spec"]
    missing += [f"hints.{tier}" for tier in HINT_TIERS if not hints.get(tier, "").strip()]
    if missing:
        raise ValueError(f"{CONTENT_FILE.name}: [{exercise_id}] lacks {', '.join(missing)}")
    return ExerciseText(raw["spec"].strip(), tuple(hints[tier].strip() for tier in HINT_TIERS))


@cache
def _texts() -> dict[str, ExerciseText]:
    raw = tomllib.loads(CONTENT_FILE.read_text(encoding="utf-8"))
    unknown = sorted(set(raw) - set(EXERCISE_IDS))
    if unknown:
        raise ValueError(f"{CONTENT_FILE.name} has sections for unknown exercises: {', '.join(unknown)}")
    return {exercise_id: _load_text(raw.get(exercise_id, {}), exercise_id) for exercise_id in EXERCISE_IDS}


def spec(exercise_id: str) -> str:
    """The official spec of an exercise (plain text; also the docstring of its stub)."""
    get_exercise(exercise_id)  # a clear KeyError for an unknown id
    return _texts()[exercise_id].spec


def hints(exercise_id: str) -> tuple[str, ...]:
    """The exercise's hints, one per tier of HINT_TIERS (concept, formula, skeleton), in that order."""
    get_exercise(exercise_id)
    return _texts()[exercise_id].hints
