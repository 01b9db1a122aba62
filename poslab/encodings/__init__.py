"""Reference positional encodings: the API students implement, plus library-only extras.

Each exercise's reference is ``poslab/encodings/<id>.py`` (the catalogue, ``poslab.exercises``,
names it); this package exports exactly the names each one asks for (``EXERCISE_API``), in the
catalogue's order, so a new exercise needs no line here.
"""

from importlib import import_module

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.encodings.rope_scaling import ROPE_SCHEDULES, SCHEDULE_TITLES, RopeSchedule, rope_schedule
from poslab.exercises import EXERCISES

EXERCISE_API: tuple[str, ...] = tuple(name for exercise in EXERCISES for name in exercise.names)

for _exercise in EXERCISES:
    _module = import_module(f"{__name__}.{_exercise.reference_file.removesuffix('.py')}")
    globals().update({name: getattr(_module, name) for name in _exercise.names})
del _exercise, _module

__all__ = [
    *EXERCISE_API,
    "apply_rotary",
    "rope_inverse_frequencies",
    "ROPE_SCHEDULES",
    "SCHEDULE_TITLES",
    "RopeSchedule",
    "rope_schedule",
]
