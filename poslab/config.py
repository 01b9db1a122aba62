"""The library's and the app's settings, read from the environment once (``Settings.from_env``).

The grader reads its own on top of these (``grader.settings``: isolation and limits;
``grader.service.settings``: the scheduler and the judges; ``grader.service.judge``: the modes a
judge warms), and the app reads ``POSLAB_LOCAL_WORKSPACE`` and ``POSLAB_GRADER_START`` in
``app_pages.ui.grading``; README.md lists every variable. These (all optional):

``POSLAB_DB_URL``               SQLAlchemy URL of the progress store (default: SQLite file below)
``POSLAB_DATA_DIR``             folder for the default SQLite file (default: ``~/.poslab``)
``POSLAB_INSTRUCTOR_PASSWORD``  password of the Instructor page (or the ``instructor_password`` secret)
``POSLAB_GRADER_TIMEOUT``       seconds of wall-clock time per exercise when grading (default 20)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the checkout or the student bundle


def _float(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be greater than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    db_url: str
    instructor_password: str | None
    grader_timeout: float

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if environ is None else environ
        data_dir = Path(env.get("POSLAB_DATA_DIR") or Path.home() / ".poslab")
        db_url = env.get("POSLAB_DB_URL") or f"sqlite:///{data_dir / 'poslab.db'}"
        return cls(
            db_url=db_url,
            instructor_password=env.get("POSLAB_INSTRUCTOR_PASSWORD") or None,
            grader_timeout=_float(env, "POSLAB_GRADER_TIMEOUT", 20.0),
        )
