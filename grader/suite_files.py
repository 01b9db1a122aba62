"""The hidden suite's files, read without importing it (and so without torch): where it is, which of
its modules only instructors use, and its fingerprint (``suite_hash``). A process that only hands
submissions to judges (``python -m grader grade``) needs the fingerprint, not the suite."""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent / "suite"
STUDENT_FILE = Path(__file__).resolve().parent / "student.py"  # the Student interface the tests call
# An exercise's modules that prove the suite and never judge (kept out of the hash and Gradescope).
INSTRUCTOR_MODULES = ("mutants", "variants")


def suite_hash(suite_dir: Path = SUITE_DIR) -> str:
    """sha256 over the suite's sources (``suite_dir/**.py``), the Student interface they call, the
    references they compare and time against, and the version of Hypothesis that draws their inputs
    (another version draws other cases from the same seeds)."""
    digest = hashlib.sha256(f"hypothesis {version('hypothesis')}\n".encode())
    reference_dir = suite_dir.parent.parent / "poslab" / "encodings"
    judged = [path for path in sorted(suite_dir.rglob("*.py")) if path.stem not in INSTRUCTOR_MODULES]
    for path in judged + [STUDENT_FILE] + sorted(reference_dir.glob("*.py")):
        digest.update(f"{path.parent.name}/{path.name}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
