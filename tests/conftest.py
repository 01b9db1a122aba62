"""Shared fixtures and the rule for tests that need a system part.

A test that needs Chromium, PostgreSQL or bubblewrap calls ``require_system_part``: locally it
skips with the reason, under ``CI=true`` it fails, so CI cannot pass by skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_system_part(available: bool, reason: str) -> None:
    if available:
        return
    if in_ci():
        pytest.fail(f"CI=true and a required system part is missing: {reason}")
    pytest.skip(reason)


@pytest.fixture
def generator() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own progress database and no instructor password; none touches ~/.poslab."""
    monkeypatch.setenv("POSLAB_DB_URL", f"sqlite:///{tmp_path / 'progress.db'}")
    monkeypatch.setenv("POSLAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POSLAB_INSTRUCTOR_PASSWORD", raising=False)
