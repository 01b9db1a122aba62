"""The grading service's settings: one frozen object, its own and the graders' together.

Environment: ``POSLAB_GRADER_SCHEDULER`` (a Dask scheduler's address; unset: an embedded cluster)
and ``POSLAB_GRADER_WORKERS`` (how many judges the embedded cluster starts; default one per core;
the variable keeps its older name: each judge is a Dask worker). The graders' own settings
(timeout, isolation, limits) are ``grader.settings.GraderSettings``, read from their variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from grader.settings import GraderSettings, positive_int
from poslab.vocabulary import GradingMode


def one_judge_per_core() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServiceSettings:
    """What a ``GradingService`` runs with (``service.settings``)."""

    grader: GraderSettings = field(default_factory=GraderSettings)  # each grading's limits: its task carries them
    scheduler: str | None = None  # a Dask scheduler's address; None: an embedded cluster
    judges: int = field(default_factory=one_judge_per_core)  # of the embedded cluster
    lease_seconds: float = 60.0  # a replica renews its jobs' leases every lease_seconds / 3
    start_seconds: float = 180.0  # judges warming up on a loaded machine (import torch, bwrap)
    warm_modes: tuple[GradingMode, ...] = tuple(GradingMode)  # what the embedded judges warm (the CLI: hidden)
    suite: str | None = None  # "module:attribute" of a stand-in suite (tests); None: the hidden suite
    # The embedded cluster's scheduler on a thread of this process, not a process of its own (the CLI: one
    # interpreter fewer to start; the app keeps its scheduler apart from its script runs).
    scheduler_in_process: bool = False

    def __post_init__(self) -> None:
        if self.judges < 1:
            raise ValueError(f"a grading service needs at least one judge, got {self.judges}")
        object.__setattr__(self, "warm_modes", tuple(GradingMode(mode) for mode in self.warm_modes))

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, grader: GraderSettings | None = None
    ) -> ServiceSettings:
        env = os.environ if environ is None else environ
        scheduler = env.get("POSLAB_GRADER_SCHEDULER", "").strip() or None
        if scheduler is not None and "://" not in scheduler:
            raise ValueError(f"POSLAB_GRADER_SCHEDULER must be an address like tcp://host:8786, got {scheduler!r}")
        return cls(
            grader=grader or GraderSettings.from_env(env),
            scheduler=scheduler,
            judges=positive_int(env, "POSLAB_GRADER_WORKERS", one_judge_per_core()),
        )
