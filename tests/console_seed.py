"""A class of 40 on the roster for the Instructor console's tests, seeded straight into the store
(no code is graded): a few students with attempts whose pass rates are counted by hand in the tests."""

from __future__ import annotations

from poslab.roster import read_roster
from poslab.store import Store, TestRow

CLASS_SIZE = 40
NOT_IMPLEMENTED = "apply_rope is not implemented yet, so this test could not run (it keeps lengths)."


def key(number: int) -> str:
    return f"s{number:02d}@uni.edu"


def roster_csv() -> bytes:
    rows = [f"Student {n:02d},{key(n)},{'A' if n % 2 else 'B'}" for n in range(1, CLASS_SIZE + 1)]
    return ("name,email,section\n" + "\n".join(rows) + "\n").encode()


def details(exercise: str, outcomes: dict[str, bool | None]) -> dict:
    """The grader's details of one attempt: one test per family; None: failed as not implemented."""
    return {
        "tests": [
            {
                "name": f"{exercise}: {family}",
                "exercise": exercise,
                "family": family,
                "status": "passed" if ok else "failed",
                "output": NOT_IMPLEMENTED if ok is None else ("Passed." if ok else "Wrong values."),
                "score": 2.0 if ok else 0.0,
                "max_score": 2.0,
                "visibility": "hidden",
            }
            for family, ok in outcomes.items()
        ]
    }


def attempt(store: Store, student: str, exercise: str, outcomes: dict[str, bool | None], code: str) -> None:
    score = 2.0 * sum(bool(ok) for ok in outcomes.values())
    store.record_attempt(
        student,
        exercise,
        score,
        2.0 * len(outcomes),
        details=details(exercise, outcomes),
        code=code,
        tests=[TestRow(exercise, f"{exercise}: {family}", bool(ok)) for family, ok in outcomes.items()],
    )


def seed_class(store: Store) -> None:
    """s01..s40 on the roster (odd: section A, even: B); s01..s06 did something, the rest nothing."""
    store.replace_roster(read_roster(roster_csv()).students)
    attempt(store, key(1), "rope", {"norm": False, "relative": False}, "def apply_rope(x):\n    return x\n")
    attempt(store, key(1), "rope", {"norm": True, "relative": True}, "def apply_rope(x):\n    return rotate(x)\n")
    attempt(store, key(2), "rope", {"norm": True, "relative": False}, "two\n")
    attempt(store, key(3), "rope", {"norm": None, "relative": None}, "raise NotImplementedError\n")
    attempt(store, key(3), "rope", {"norm": True, "relative": False}, "three\n")
    attempt(store, key(4), "rope", {"norm": None, "relative": None}, "raise NotImplementedError\n")
    attempt(store, key(5), "rope", {"norm": True, "relative": True}, "five\n")
    attempt(store, key(5), "rope", {"norm": False, "relative": False}, "five, broken\n")
    attempt(store, key(6), "alibi", {"slopes": True}, "six\n")
    store.record_visit(key(7), "rope")  # active, nothing handed in
