"""The extrapolation experiment's files: two CSVs and a JSON sidecar, and the loaders' checks.

    results.csv           encoding,seed,train_len,eval_len,accuracy,status,perplexity
    results_passkey.csv   encoding,seed,train_len,eval_len,depth,distance,trials,retrieved,status,probe
    results.json          how the rows were made (``RunRecord``)

The first six columns of ``results.csv`` are its original ones, in their original order. Columns
are only ever added after them, never renamed, and a file made before a column existed still
loads, with that number empty. A run made before the passkey probe has no ``_passkey.csv``.
The loaders reject a malformed file with a ``ValueError`` that names the file, line and problem.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TypeVar

from poslab.experiments.results import ExtrapolationResults, Measurement, ProbeMeasurement, RunRecord

COLUMNS = ("encoding", "seed", "train_len", "eval_len", "accuracy", "status")
ADDED_COLUMNS = ("perplexity",)  # written always; read when present
PROBE_COLUMNS = ("encoding", "seed", "train_len", "eval_len", "depth", "distance", "trials", "retrieved", "status")
PROBE_ADDED_COLUMNS = ("probe",)  # passkey or two_hop; a file without it holds passkey rows
WHOLE = ("seed", "train_len", "eval_len", "distance", "trials", "retrieved")
NUMBERS = ("accuracy", "perplexity", "depth")
MAY_BE_EMPTY = ("accuracy", "perplexity", "retrieved")

Row = TypeVar("Row", Measurement, ProbeMeasurement)


def sidecar_path(csv_path: str | Path) -> Path:
    return Path(csv_path).with_suffix(".json")


def passkey_path(csv_path: str | Path) -> Path:
    path = Path(csv_path)
    return path.with_name(f"{path.stem}_passkey.csv")


def _cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _to_csv(header: tuple[str, ...], rows: list[list[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(value) for value in row] for row in rows)
    return out.getvalue()


def measurements_to_csv(measurements: tuple[Measurement, ...] | list[Measurement]) -> str:
    return _to_csv(
        COLUMNS + ADDED_COLUMNS, [[getattr(m, name) for name in COLUMNS + ADDED_COLUMNS] for m in measurements]
    )


def probes_to_csv(probes: tuple[ProbeMeasurement, ...] | list[ProbeMeasurement]) -> str:
    names = PROBE_COLUMNS + PROBE_ADDED_COLUMNS
    return _to_csv(names, [[getattr(p, name) for name in names] for p in probes])


def _field(row: dict, name: str, line: int) -> object:
    raw = row.get(name)  # None: an added column that this (older) file does not have
    if raw is None or raw.strip() == "":
        if raw is None or name in MAY_BE_EMPTY:
            return None
        raise ValueError(f"line {line}: {name} is empty")
    if name in WHOLE:
        parse, kind = int, "a whole number"
    elif name in NUMBERS:
        parse, kind = float, "a number"
    else:
        return raw
    try:
        return parse(raw)
    except ValueError:
        also = " or empty" if name in MAY_BE_EMPTY else ""
        raise ValueError(f"line {line}: {name} must be {kind}{also}, got {raw!r}") from None


def _check_header(header: tuple[str, ...], required: tuple[str, ...], added: tuple[str, ...]) -> None:
    if not header:
        raise ValueError("the file is empty: expected the header " + ",".join(required + added))
    missing = [name for name in required if name not in header]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}; expected {','.join(required + added)}")
    allowed = [required + added[:count] for count in range(len(added) + 1)]
    if header not in allowed:
        later = f", optionally followed by {','.join(added)}" if added else ""
        raise ValueError(f"columns must be exactly {','.join(required)}{later}; got {','.join(header)}")


def _parse(
    text: str, required: tuple[str, ...], added: tuple[str, ...], build: Callable[..., Row], key: Callable[[Row], tuple]
) -> tuple[Row, ...]:
    reader = csv.DictReader(io.StringIO(text))
    _check_header(tuple(reader.fieldnames or ()), required, added)
    rows, seen = [], set()
    for line, row in enumerate(reader, start=2):
        if None in row or any(value is None for value in row.values()):
            raise ValueError(f"line {line}: expected {len(reader.fieldnames)} fields")
        try:
            parsed = build(**{name: _field(row, name, line) for name in required + added})
        except ValueError as error:
            message = str(error)
            raise ValueError(message if message.startswith("line ") else f"line {line}: {message}") from None
        if key(parsed) in seen:
            raise ValueError(
                f"line {line}: a second row for "
                + ", ".join(
                    f"{name} {value}"
                    for name, value in zip(("encoding", "seed", "eval_len", "depth", "probe"), key(parsed))
                )
            )
        seen.add(key(parsed))
        rows.append(parsed)
    if not rows:
        raise ValueError("the file has a header but no rows")
    return tuple(rows)


def parse_measurements(text: str) -> tuple[Measurement, ...]:
    """Parse and check the results CSV; the first problem found raises ``ValueError``."""
    return _parse(text, COLUMNS, ADDED_COLUMNS, Measurement, lambda m: (m.encoding, m.seed, m.eval_len))


def parse_probes(text: str) -> tuple[ProbeMeasurement, ...]:
    """Parse and check the passkey CSV; the first problem found raises ``ValueError``."""
    return _parse(
        text,
        PROBE_COLUMNS,
        PROBE_ADDED_COLUMNS,
        _probe_row,
        lambda p: (p.encoding, p.seed, p.eval_len, p.depth, p.probe),
    )


def _probe_row(probe: str | None = None, **fields: object) -> ProbeMeasurement:
    return ProbeMeasurement(**fields) if probe is None else ProbeMeasurement(**fields, probe=probe)


def save_results(results: ExtrapolationResults, csv_path: str | Path) -> None:
    """Write the CSV, the passkey CSV (when the run probed) and the JSON sidecar."""
    path = Path(csv_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(measurements_to_csv(results.measurements), encoding="utf-8")
    if results.probes:
        passkey_path(path).write_text(probes_to_csv(results.probes), encoding="utf-8")
    sidecar_path(path).write_text(json.dumps(asdict(results.record), indent=2) + "\n", encoding="utf-8")


def _read(path: Path, parse: Callable[[str], tuple]) -> tuple:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path.name}: {error}") from None


def load_results(csv_path: str | Path) -> ExtrapolationResults:
    """Read and check a CSV, its sidecar and its passkey CSV; a malformed file raises ``ValueError``."""
    path = Path(csv_path)
    measurements = _read(path, parse_measurements)
    try:
        record = RunRecord.from_dict(json.loads(sidecar_path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ValueError(f"{path.name} has no sidecar {sidecar_path(path).name}") from None
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise ValueError(f"{sidecar_path(path).name}: {error}") from None
    probes: tuple[ProbeMeasurement, ...] = ()
    if record.probe is not None:
        if not passkey_path(path).is_file():
            raise ValueError(
                f"{sidecar_path(path).name} records a passkey probe, but {passkey_path(path).name} is missing"
            )
        probes = _read(passkey_path(path), parse_probes)
    return ExtrapolationResults(measurements, record, probes)
