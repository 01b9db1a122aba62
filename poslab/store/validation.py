"""Input checks for everything the store writes: a bad value raises a clear ``ValueError`` before
any SQL runs, so nothing half-valid reaches the database.
"""

from __future__ import annotations

import json
import math
import unicodedata
from numbers import Real
from typing import Any

MAX_NAME_CHARS = 64
MAX_COMMENT_CHARS = 2_000
MAX_CODE_CHARS = 200_000  # a submission is one short file; this only stops accidents
MAX_DETAILS_CHARS = 1_000_000
MAX_TEST_NAME_CHARS = 1_000  # a pytest node id with its parameters fits
MAX_HINT_TIER = 10


def clean_student(name: object) -> str:
    """The trimmed student name; 1 to 64 characters, no control characters (they break tables)."""
    if not isinstance(name, str):
        raise ValueError(f"student name must be text, got {type(name).__name__}")
    trimmed = name.strip()
    if not 1 <= len(trimmed) <= MAX_NAME_CHARS:
        raise ValueError(
            f"student name must be 1 to {MAX_NAME_CHARS} characters after trimming spaces; got {len(trimmed)}"
        )
    if any(unicodedata.category(char) == "Cc" for char in trimmed):
        raise ValueError("student name must not contain control characters such as newlines or tabs")
    return trimmed


def clean_comment(text: object) -> str:
    """The trimmed comment text; 1 to 2,000 characters (newlines allowed)."""
    if not isinstance(text, str):
        raise ValueError(f"comment must be text, got {type(text).__name__}")
    trimmed = text.strip()
    if not 1 <= len(trimmed) <= MAX_COMMENT_CHARS:
        raise ValueError(
            f"comment must be 1 to {MAX_COMMENT_CHARS:,} characters after trimming spaces; got {len(trimmed):,}"
        )
    return trimmed


def require_bool(value: object, what: str) -> bool:
    # bool only: 0/1 or "yes" would be guesses about what the caller meant.
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be True or False, got {value!r}")
    return value


def require_id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, got {value!r}")
    return value


def require_hint_tier(tier: object) -> int:
    tier = require_id(tier, "hint tier")
    if not 1 <= tier <= MAX_HINT_TIER:
        raise ValueError(f"hint tier must be between 1 and {MAX_HINT_TIER}, got {tier}")
    return tier


def _finite_number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{what} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return number


def clean_score(score: object, max_score: object) -> tuple[float, float]:
    """Score and maximum as floats, with 0 <= score <= max_score and max_score > 0."""
    maximum = _finite_number(max_score, "max_score")
    if maximum <= 0:
        raise ValueError(f"max_score must be greater than 0, got {max_score!r}")
    value = _finite_number(score, "score")
    if not 0 <= value <= maximum:
        raise ValueError(f"score must be between 0 and max_score ({maximum:g}), got {score!r}")
    return value, maximum


def details_to_json(details: Any) -> str | None:
    """The grader's result as JSON text (None stays None); anything JSON cannot hold is refused."""
    if details is None:
        return None
    try:
        # NaN is allowed: a broken submission can produce one in a measured error, and losing the
        # attempt over it would be worse. Python's json reads it back.
        text = json.dumps(details, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ValueError(f"details must be JSON-able (dicts, lists, text, numbers, booleans): {error}") from None
    if len(text) > MAX_DETAILS_CHARS:
        raise ValueError(f"details are {len(text):,} characters as JSON; the limit is {MAX_DETAILS_CHARS:,}")
    return text


def clean_code(code: object) -> str | None:
    if code is None:
        return None
    if not isinstance(code, str):
        raise ValueError(f"code must be text, got {type(code).__name__}")
    if len(code) > MAX_CODE_CHARS:
        raise ValueError(f"code is {len(code):,} characters; the limit is {MAX_CODE_CHARS:,}")
    return code


def clean_test_rows(rows: object, exercise: str) -> list[tuple[str, bool]]:
    """(test, passed) of each per-test row of an attempt at ``exercise``; rows of another exercise are refused."""
    cleaned = []
    for row in rows or ():
        for field in ("exercise", "test", "passed"):
            if not hasattr(row, field):
                raise ValueError(f"each test row needs exercise, test and passed, got {row!r}")
        if row.exercise != exercise:
            raise ValueError(f"a test row of exercise {row.exercise!r} was given with an attempt at {exercise!r}")
        if not isinstance(row.test, str) or not 1 <= len(row.test) <= MAX_TEST_NAME_CHARS:
            raise ValueError(
                f"a test name must be text of 1 to {MAX_TEST_NAME_CHARS:,} characters, got {str(row.test)[:80]!r}"
            )
        cleaned.append((row.test, require_bool(row.passed, "passed")))
    return cleaned
