"""Results of the extrapolation experiment: one row per (encoding, seed, evaluation length).

The CSV has exactly the columns ``encoding,seed,train_len,eval_len,accuracy,status``; ``status`` is
``ok`` (accuracy in [0, 1]) or ``cannot_run`` (accuracy empty: a learned table has no rows past its
training length, so there is no number to report). A JSON sidecar next to the CSV (same name,
``.json``) records how the rows were made: command, configuration, seeds, versions and run time.
The loaders reject a malformed file with a ``ValueError`` that names the line and the problem.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from poslab.experiments.tiny_transformer import ENCODINGS

COLUMNS = ("encoding", "seed", "train_len", "eval_len", "accuracy", "status")
OK, CANNOT_RUN = "ok", "cannot_run"
STATUSES = (OK, CANNOT_RUN)


@dataclass(frozen=True)
class Measurement:
    encoding: str
    seed: int
    train_len: int
    eval_len: int
    accuracy: float | None  # None exactly when status is cannot_run
    status: str

    def __post_init__(self) -> None:
        problem = _measurement_problem(self)
        if problem:
            raise ValueError(problem)


def _measurement_problem(m: Measurement) -> str | None:
    if m.encoding not in ENCODINGS:
        return f"unknown encoding {m.encoding!r} (known: {', '.join(ENCODINGS)})"
    if m.status not in STATUSES:
        return f"status {m.status!r} is not one of {', '.join(STATUSES)}"
    if m.train_len < 1 or m.eval_len < 1:
        return f"train_len and eval_len must be positive, got {m.train_len} and {m.eval_len}"
    if m.status == CANNOT_RUN:
        return None if m.accuracy is None else f"accuracy {m.accuracy} is given but status is {CANNOT_RUN}"
    if m.accuracy is None:
        return f"status is {OK} but accuracy is empty"
    if not (math.isfinite(m.accuracy) and 0.0 <= m.accuracy <= 1.0):
        return f"accuracy {m.accuracy} is outside [0, 1]"
    return None


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

    @classmethod
    def from_dict(cls, raw: dict) -> "RunRecord":
        missing = [name for name in cls.__dataclass_fields__ if name not in raw]
        if missing:
            raise ValueError(f"run record is missing {', '.join(missing)}")
        return cls(**{**raw, "seeds": tuple(raw["seeds"])})


@dataclass(frozen=True)
class ExtrapolationResults:
    measurements: tuple[Measurement, ...]
    record: RunRecord

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ExtrapolationResults":
        raw = json.loads(text)
        return cls(tuple(Measurement(**row) for row in raw["measurements"]),
                   RunRecord.from_dict(raw["record"]))


def sidecar_path(csv_path: str | Path) -> Path:
    return Path(csv_path).with_suffix(".json")


def measurements_to_csv(measurements: tuple[Measurement, ...] | list[Measurement]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for m in measurements:
        accuracy = "" if m.accuracy is None else f"{m.accuracy:.4f}"
        writer.writerow([m.encoding, m.seed, m.train_len, m.eval_len, accuracy, m.status])
    return out.getvalue()


def _int_field(row: dict, name: str, line: int) -> int:
    try:
        return int(row[name])
    except (TypeError, ValueError):
        raise ValueError(f"line {line}: {name} must be a whole number, got {row[name]!r}") from None


def _accuracy_field(raw: str | None, line: int) -> float | None:
    if raw is None or raw.strip() == "":
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"line {line}: accuracy must be a number or empty, got {raw!r}") from None


def _parse_row(row: dict, line: int) -> Measurement:
    if None in row or any(value is None for value in row.values()):
        raise ValueError(f"line {line}: expected {len(COLUMNS)} fields")
    try:
        return Measurement(row["encoding"], _int_field(row, "seed", line), _int_field(row, "train_len", line),
                           _int_field(row, "eval_len", line), _accuracy_field(row["accuracy"], line),
                           row["status"])
    except ValueError as error:
        message = str(error)
        raise ValueError(message if message.startswith("line ") else f"line {line}: {message}") from None


def parse_measurements(text: str) -> tuple[Measurement, ...]:
    """Parse and check CSV text; the first problem found raises ``ValueError``."""
    reader = csv.DictReader(io.StringIO(text))
    header = tuple(reader.fieldnames or ())
    if not header:
        raise ValueError("the file is empty: expected the header " + ",".join(COLUMNS))
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}; expected exactly {','.join(COLUMNS)}")
    if header != COLUMNS:
        raise ValueError(f"columns must be exactly {','.join(COLUMNS)}, got {','.join(header)}")
    rows, seen = [], set()
    for line, row in enumerate(reader, start=2):
        measurement = _parse_row(row, line)
        key = (measurement.encoding, measurement.seed, measurement.eval_len)
        if key in seen:
            raise ValueError(f"line {line}: a second row for encoding {key[0]}, seed {key[1]}, eval_len {key[2]}")
        seen.add(key)
        rows.append(measurement)
    if not rows:
        raise ValueError("the file has a header but no rows")
    return tuple(rows)


def save_results(results: ExtrapolationResults, csv_path: str | Path) -> None:
    """Write the CSV and its JSON sidecar."""
    path = Path(csv_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(measurements_to_csv(results.measurements), encoding="utf-8")
    sidecar_path(path).write_text(json.dumps(asdict(results.record), indent=2) + "\n", encoding="utf-8")


def load_results(csv_path: str | Path) -> ExtrapolationResults:
    """Read and check a CSV and its sidecar; a malformed file raises ``ValueError`` saying what is wrong."""
    path = Path(csv_path)
    try:
        measurements = parse_measurements(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path.name}: {error}") from None
    try:
        record = RunRecord.from_dict(json.loads(sidecar_path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ValueError(f"{path.name} has no sidecar {sidecar_path(path).name}") from None
    except (json.JSONDecodeError, TypeError) as error:
        raise ValueError(f"{sidecar_path(path).name}: {error}") from None
    return ExtrapolationResults(measurements, record)
