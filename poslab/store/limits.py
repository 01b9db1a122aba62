"""How long a store call may wait, in one place (``StoreLimits.from_env``).

``POSLAB_STORE_WAIT``      seconds a call waits for a database held by another program (a locked
                           SQLite file: its busy timeout and the retries; PostgreSQL: ``lock_timeout``)
                           before it gives up with a sentence (default 5)
``POSLAB_STORE_CONNECT``   seconds to reach a database server (PostgreSQL ``connect_timeout``), and
                           how long a call lost to a dropped connection waits for the server to
                           answer again before its one retry (default 3)
``POSLAB_STORE_STATEMENT`` seconds one PostgreSQL statement may run (``statement_timeout``; default 30)
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number of seconds greater than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class StoreLimits:
    wait_seconds: float = 5.0
    connect_seconds: float = 3.0
    statement_seconds: float = 30.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StoreLimits:
        env = os.environ if environ is None else environ
        return cls(
            wait_seconds=_seconds(env, "POSLAB_STORE_WAIT", cls.wait_seconds),
            connect_seconds=_seconds(env, "POSLAB_STORE_CONNECT", cls.connect_seconds),
            statement_seconds=_seconds(env, "POSLAB_STORE_STATEMENT", cls.statement_seconds),
        )
