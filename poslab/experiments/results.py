"""Results of the extrapolation experiment, as plain dataclasses that round-trip through JSON.

* ``Measurement``: one (encoding, seed, test length): accuracy and perplexity on the recall task;
* ``ProbeMeasurement``: one (arm, seed, test length, needle depth) of a probe: the passkey or the
  two-hop chain (``two_hop``);
* ``RunRecord``: how they were made (command, configuration, seeds, versions, run time).

A status is ``ok`` or ``cannot_run`` (a learned table has no rows past its training length, so
there is no number to report, and every number of that row is empty). The ``encoding`` column
holds an arm (``rope_arms``): a trained encoding, or RoPE with a context-extension schedule. The
files they are saved in, and the loaders' checks, are in ``result_files``.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Literal, get_args

from poslab.experiments.rope_arms import ARMS

Status = Literal["ok", "cannot_run"]
OK, CANNOT_RUN = get_args(Status)
STATUSES: tuple[str, ...] = get_args(Status)
ProbeKind = Literal["passkey", "two_hop"]
PASSKEY, TWO_HOP = get_args(ProbeKind)
PROBE_KINDS: tuple[str, ...] = get_args(ProbeKind)


def _share_problem(name: str, value: float) -> str | None:
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        return f"{name} {value} is outside [0, 1]"
    return None


def _common_problem(encoding: str, status: str, train_len: int, eval_len: int) -> str | None:
    if encoding not in ARMS:
        return f"unknown encoding {encoding!r} (known: {', '.join(ARMS)})"
    if status not in STATUSES:
        return f"status {status!r} is not one of {', '.join(STATUSES)}"
    if train_len < 1 or eval_len < 1:
        return f"train_len and eval_len must be positive, got {train_len} and {eval_len}"
    return None


@dataclass(frozen=True)
class Measurement:
    encoding: str
    seed: int
    train_len: int
    eval_len: int
    accuracy: float | None  # None exactly when status is cannot_run
    status: Status
    perplexity: float | None = None  # None when it cannot run, or in files made before it was measured

    def __post_init__(self) -> None:
        problem = _common_problem(self.encoding, self.status, self.train_len, self.eval_len) or self._problem()
        if problem:
            raise ValueError(problem)

    def _problem(self) -> str | None:
        if self.status == CANNOT_RUN:
            given = [name for name in ("accuracy", "perplexity") if getattr(self, name) is not None]
            return f"{' and '.join(given)} given but status is {CANNOT_RUN}" if given else None
        if self.accuracy is None:
            return f"status is {OK} but accuracy is empty"
        if self.perplexity is not None and not (math.isfinite(self.perplexity) and self.perplexity >= 1.0):
            return f"perplexity {self.perplexity} is not a number of at least 1"
        return _share_problem("accuracy", self.accuracy)


@dataclass(frozen=True)
class ProbeMeasurement:
    """``retrieved`` of ``trials`` needles, ``distance`` tokens back from the query (``passkey``); for
    the two-hop probe (``two_hop``), chains followed to their end, the first needle ``distance`` back."""

    encoding: str
    seed: int
    train_len: int
    eval_len: int
    depth: float  # where the needle sits: 0 the start of the sequence, 1 just before the query
    distance: int
    trials: int
    retrieved: int | None  # None exactly when status is cannot_run
    status: Status
    probe: ProbeKind = PASSKEY  # files made before the two-hop probe hold passkey rows only

    def __post_init__(self) -> None:
        problem = _common_problem(self.encoding, self.status, self.train_len, self.eval_len) or self._problem()
        if problem:
            raise ValueError(problem)

    def _problem(self) -> str | None:
        if self.probe not in PROBE_KINDS:
            return f"probe {self.probe!r} is not one of {', '.join(PROBE_KINDS)}"
        if not (math.isfinite(self.depth) and 0.0 <= self.depth <= 1.0):
            return f"depth {self.depth} is outside [0, 1]"
        if not 1 <= self.distance < self.eval_len:
            return f"distance {self.distance} is not between 1 and eval_len - 1 = {self.eval_len - 1}"
        if self.trials < 1:
            return f"trials must be positive, got {self.trials}"
        if self.status == CANNOT_RUN:
            return None if self.retrieved is None else f"retrieved {self.retrieved} is given but status is {CANNOT_RUN}"
        if self.retrieved is None:
            return f"status is {OK} but retrieved is empty"
        if not (float(self.retrieved).is_integer() and 0 <= self.retrieved <= self.trials):
            return f"retrieved {self.retrieved} is not a whole number from 0 to trials = {self.trials}"
        return None

    @property
    def retrieval(self) -> float | None:
        """The share of needles retrieved."""
        return None if self.retrieved is None else self.retrieved / self.trials


@dataclass(frozen=True)
class RunRecord:
    """How a set of measurements was made: the sidecar JSON."""

    command: str
    mode: str  # "quick" or "full"
    seeds: tuple[int, ...]
    config: dict  # the ExperimentConfig as plain values
    task: str  # one line describing the task
    chance_accuracy: float
    versions: dict[str, str]
    run_time_s: float
    ms_per_step: float  # wall clock per training step
    cpu_ms_per_step: float  # CPU time of this process per step: less sensitive to a busy machine
    finished_at: str
    probe: str | None = None  # one line describing the passkey probe; None: a run made without it
    probe_chance: float | None = None
    cores: int | None = None  # of the machine; None in runs recorded before it was
    load_average: float | None = None  # the machine's 1-minute load average as the run ended: wall times
    # on a busy machine are longer than on an idle one, the CPU times much less so
    two_hop: str | None = None  # one line describing the two-hop probe; None: a run made without it
    two_hop_chance: float | None = None

    @classmethod
    def from_dict(cls, raw: dict) -> RunRecord:
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [name for name in required if name not in raw]
        if missing:
            raise ValueError(f"run record is missing {', '.join(missing)}")
        unknown = sorted(set(raw) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"run record has unknown field(s) {', '.join(unknown)}")
        return cls(**{**raw, "seeds": tuple(raw["seeds"])})


@dataclass(frozen=True)
class ExtrapolationResults:
    measurements: tuple[Measurement, ...]
    record: RunRecord
    probes: tuple[ProbeMeasurement, ...] = ()  # empty: a run made without the passkey probe

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ExtrapolationResults:
        raw = json.loads(text)
        return cls(
            tuple(Measurement(**row) for row in raw["measurements"]),
            RunRecord.from_dict(raw["record"]),
            tuple(ProbeMeasurement(**row) for row in raw.get("probes", ())),
        )
