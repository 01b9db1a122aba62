"""Reference positional encodings: the API students implement, plus library-only extras.

Exercise API (the exercises and the grader use exactly these names and signatures):
``attention``, ``sinusoidal_encoding``, ``LearnedPositionalEmbedding``, ``apply_rope``,
``alibi_slopes``, ``alibi_bias``, ``t5_relative_bucket``, ``t5_relative_bias``, ``decode``.
"""

from poslab.encodings.alibi import alibi_bias, alibi_slopes
from poslab.encodings.attention import attention
from poslab.encodings.decode import decode
from poslab.encodings.learned import LearnedPositionalEmbedding
from poslab.encodings.rope import apply_rope, apply_rotary, rope_inverse_frequencies
from poslab.encodings.rope_scaling import ROPE_SCHEDULES, SCHEDULE_TITLES, RopeSchedule, rope_schedule
from poslab.encodings.sinusoidal import sinusoidal_encoding
from poslab.encodings.t5 import t5_relative_bias, t5_relative_bucket

EXERCISE_API = (
    "attention",
    "sinusoidal_encoding",
    "LearnedPositionalEmbedding",
    "apply_rope",
    "alibi_slopes",
    "alibi_bias",
    "t5_relative_bucket",
    "t5_relative_bias",
    "decode",
)

__all__ = [
    *EXERCISE_API,
    "apply_rotary",
    "rope_inverse_frequencies",
    "ROPE_SCHEDULES",
    "SCHEDULE_TITLES",
    "RopeSchedule",
    "rope_schedule",
]
