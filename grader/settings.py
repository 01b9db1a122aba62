"""The grader's settings, read from the environment once (on top of ``poslab.config.Settings``).

Environment variables (all optional):

``POSLAB_GRADER_TIMEOUT``     seconds of wall-clock time per exercise (default 20; poslab.config)
``POSLAB_GRADER_ISOLATION``   ``auto`` (bubblewrap if it works, else the fallback), ``bwrap`` or
                              ``fallback`` (default ``auto``)
``POSLAB_GRADER_MEMORY_MB``   address space of a child in MiB (default 3072; torch itself maps
                              about 640 MiB, measured)
``POSLAB_GRADER_UID_BASE``    first of the uids given to children when running as root
                              (default 1000000)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from grader.vocabulary import IsolationSetting
from poslab.config import Settings

ISOLATIONS = tuple(IsolationSetting)  # what POSLAB_GRADER_ISOLATION and --isolation accept


def positive_int(environ: Mapping[str, str], name: str, default: int) -> int:
    """The whole number > 0 in ``environ[name]``, ``default`` when unset; a sentence otherwise."""
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) <= 0:
        raise ValueError(f"{name} must be a positive whole number, got {raw!r}")
    return int(raw)


@dataclass(frozen=True)
class GraderSettings:
    timeout: float = 20.0  # wall-clock seconds a child may spend per exercise
    isolation: IsolationSetting = IsolationSetting.AUTO
    memory_bytes: int = 3072 << 20  # RLIMIT_AS of a child
    processes: int = 32  # RLIMIT_NPROC of a child's uid (threads count too)
    file_bytes: int = 16 << 20  # RLIMIT_FSIZE: the largest file a child may write
    open_files: int = 256  # RLIMIT_NOFILE
    tmp_bytes: int = 64 << 20  # size of the worker's private /tmp (bwrap only)
    max_message_bytes: int = 64 << 20  # the largest frame the judge accepts from a child
    max_header_bytes: int = 1 << 20
    max_files: int = 64  # per submission
    max_submission_bytes: int = 2 << 20  # all of a submission's sources together
    uid_base: int = 1_000_000
    worker_start_seconds: float = 120.0  # bwrap + import torch on a loaded machine

    def __post_init__(self) -> None:
        object.__setattr__(self, "isolation", IsolationSetting(self.isolation))  # "auto" reads as AUTO

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GraderSettings:
        env = os.environ if environ is None else environ
        isolation = env.get("POSLAB_GRADER_ISOLATION", "").strip() or IsolationSetting.AUTO
        if isolation not in ISOLATIONS:
            raise ValueError(f"POSLAB_GRADER_ISOLATION must be one of {', '.join(ISOLATIONS)}, got {isolation!r}")
        return cls(
            timeout=Settings.from_env(env).grader_timeout,
            isolation=isolation,
            memory_bytes=positive_int(env, "POSLAB_GRADER_MEMORY_MB", 3072) << 20,
            uid_base=positive_int(env, "POSLAB_GRADER_UID_BASE", 1_000_000),
        )

    def with_changes(self, **changes) -> GraderSettings:
        return replace(self, **{key: value for key, value in changes.items() if value is not None})

    def child_limits(self, exercises: int) -> dict:
        """The rlimits a child sets on itself; CPU time just above the wall-clock budget of all
        the exercises it may serve (the wall clock, per exercise, is the judge's to enforce)."""
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": int(self.timeout * exercises) + 2,
            "processes": self.processes,
            "file_bytes": self.file_bytes,
            "open_files": self.open_files,
        }
