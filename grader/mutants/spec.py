"""What a known mistake is: a name, its exercise, a description and patches on the reference."""

from __future__ import annotations

from dataclasses import dataclass

Patch = tuple[str, str]  # (old snippet, new snippet); old occurs exactly once in reference_source()


@dataclass(frozen=True)
class MutantSpec:
    name: str
    exercise: str
    description: str
    patches: tuple[Patch, ...]
    slow: bool = False  # takes seconds by design (a Python loop); the suite's speed tests target it
