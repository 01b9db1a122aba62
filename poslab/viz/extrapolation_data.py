"""The extrapolation lab's numbers, summarised over seeds: what the charts, tables and reading share.

* ``Cell``: one encoding at one test length (accuracy or perplexity), mean and seed range;
* ``ProbeCell``: one encoding, test length and needle depth of the passkey probe;
* ``retrieval_by_reach``: the probe pooled into needles within reach of training (less than
  ``train_len`` tokens back) and beyond it, per seed, at one test length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Literal

import pandas as pd

from poslab.experiments.results import (
    CANNOT_RUN,
    PASSKEY,
    ExtrapolationResults,
    Measurement,
    ProbeKind,
    ProbeMeasurement,
)
from poslab.experiments.rope_arms import ARMS

TITLES = {
    "none": "NoPE",
    "sinusoidal": "sinusoidal",
    "learned": "learned",
    "rope": "RoPE",
    "alibi": "ALiBi",
    "rope+linear": "RoPE+PI",
    "rope+ntk": "RoPE+NTK",
    "rope+yarn": "RoPE+YaRN",
}
COLORS = {
    "none": "#7f7f7f",
    "sinusoidal": "#1f77b4",
    "learned": "#9467bd",
    "rope": "#ff7f0e",
    "alibi": "#2ca02c",
    "rope+linear": "#d62728",
    "rope+ntk": "#8c564b",
    "rope+yarn": "#e377c2",
}
Metric = Literal["accuracy", "perplexity"]


@dataclass(frozen=True)
class Cell:
    """One encoding at one evaluation length, over its seeds."""

    encoding: str
    eval_len: int
    n_seeds: int
    mean: float | None  # None when no seed could run (or, for perplexity, none was measured)
    low: float | None  # lowest seed
    high: float | None  # highest seed

    @property
    def can_run(self) -> bool:
        return self.mean is not None


def _spread(values: list[float]) -> tuple[float | None, float | None, float | None]:
    return (mean(values), min(values), max(values)) if values else (None, None, None)


def _order(encoding: str) -> int:
    return ARMS.index(encoding)


def summarize(measurements: Sequence[Measurement], metric: Metric = "accuracy") -> tuple[Cell, ...]:
    """Mean and min-max over seeds, per (arm, eval_len), in ``ARMS`` order."""
    groups: dict[tuple[str, int], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.encoding, m.eval_len), []).append(m)
    cells = []
    for (encoding, eval_len), rows in sorted(groups.items(), key=lambda item: (_order(item[0][0]), item[0][1])):
        values = [getattr(m, metric) for m in rows if m.status != CANNOT_RUN and getattr(m, metric) is not None]
        cells.append(Cell(encoding, eval_len, len(rows), *_spread(values)))
    return tuple(cells)


@dataclass(frozen=True)
class ProbeCell:
    """One encoding, test length and needle depth, over its seeds (retrieval as a share)."""

    encoding: str
    eval_len: int
    depth: float
    distance: int
    n_seeds: int
    trials: int  # needles per seed
    mean: float | None
    low: float | None
    high: float | None

    @property
    def can_run(self) -> bool:
        return self.mean is not None


def summarize_probes(probes: Sequence[ProbeMeasurement], kind: ProbeKind = PASSKEY) -> tuple[ProbeCell, ...]:
    """Mean and min-max over seeds of one probe's rows, per (arm, eval_len, depth)."""
    groups: dict[tuple[str, int, float], list[ProbeMeasurement]] = {}
    for p in probes:
        if p.probe != kind:
            continue
        groups.setdefault((p.encoding, p.eval_len, p.depth), []).append(p)
    cells = []
    for (encoding, eval_len, depth), rows in sorted(
        groups.items(), key=lambda item: (_order(item[0][0]), item[0][1], item[0][2])
    ):
        values = [p.retrieval for p in rows if p.retrieval is not None]
        cells.append(
            ProbeCell(encoding, eval_len, depth, rows[0].distance, len(rows), rows[0].trials, *_spread(values))
        )
    return tuple(cells)


@dataclass(frozen=True)
class Reach:
    """Needles pooled over depths: ``near`` ones less than ``train_len`` tokens back, ``far`` ones not."""

    encoding: str
    eval_len: int
    near: Cell | None  # None when there is no such needle at this length
    far: Cell | None
    needles_far: int  # pooled over depths and seeds


def retrieval_by_reach(probes: Sequence[ProbeMeasurement], train_len: int, eval_len: int) -> dict[str, Reach]:
    """Per arm at ``eval_len``: passkey retrieval of near and far needles, mean and range over seeds."""
    reach = {}
    for encoding in ARMS:
        rows = [p for p in probes if p.encoding == encoding and p.eval_len == eval_len and p.probe == PASSKEY]
        if not rows:
            continue

        def pooled(far: bool, rows=rows, encoding=encoding) -> tuple[Cell | None, int]:
            chosen = [p for p in rows if (p.distance >= train_len) == far]
            if not chosen:
                return None, 0
            per_seed = {}
            for p in chosen:
                if p.retrieved is not None:
                    hits, trials = per_seed.get(p.seed, (0, 0))
                    per_seed[p.seed] = (hits + p.retrieved, trials + p.trials)
            shares = [hits / trials for hits, trials in per_seed.values()]
            return Cell(
                encoding,
                eval_len,
                len({p.seed for p in chosen}),
                *_spread(shares),
            ), sum(p.trials for p in chosen)

        (near, _), (far, needles_far) = pooled(False), pooled(True)
        reach[encoding] = Reach(encoding, eval_len, near, far, needles_far)
    return reach


def train_len_of(results: ExtrapolationResults) -> int:
    return results.measurements[0].train_len


def chart_frame(results: ExtrapolationResults, metric: Metric = "accuracy") -> pd.DataFrame:
    """One row per cell: encoding title, eval_len, multiple, mean/low/high (NaN when it cannot run)."""
    train_len = train_len_of(results)
    return pd.DataFrame(
        [
            {
                "encoding": TITLES[c.encoding],
                "eval_len": c.eval_len,
                "multiple": c.eval_len // train_len,
                "mean": c.mean,
                "low": c.low,
                "high": c.high,
                "seeds": c.n_seeds,
                "status": "ok" if c.can_run else "cannot run",
            }
            for c in summarize(results.measurements, metric)
        ]
    )


def probe_frame(results: ExtrapolationResults, kind: ProbeKind = PASSKEY) -> pd.DataFrame:
    """One row per probe cell, with the depth and the needle's distance."""
    return pd.DataFrame(
        [
            {
                "encoding": TITLES[c.encoding],
                "eval_len": c.eval_len,
                "depth": c.depth,
                "distance": c.distance,
                "mean": c.mean,
                "low": c.low,
                "high": c.high,
                "seeds": c.n_seeds,
                "needles": c.trials * c.n_seeds,
                "status": "ok" if c.can_run else "cannot run",
            }
            for c in summarize_probes(results.probes, kind)
        ]
    )


def percent(value: float) -> str:
    return f"{100 * value:.0f}%"


def perplexity_text(value: float) -> str:
    """One decimal below 100, none above: "1.6", "47.8", "1062"."""
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _with_range(cell: Cell | ProbeCell, show: Callable[[float], str]) -> str:
    if not cell.can_run:
        return "cannot run"
    if cell.n_seeds == 1 or show(cell.low) == show(cell.high):
        return show(cell.mean)
    return f"{show(cell.mean)} ({show(cell.low)}-{show(cell.high)})"


def summary_table(results: ExtrapolationResults, metric: Metric = "accuracy") -> pd.DataFrame:
    """Encodings as rows, evaluation lengths as columns: "mean (low-high)" or "cannot run"."""
    rows: dict[str, dict[str, str]] = {}
    train_len = train_len_of(results)
    show = percent if metric == "accuracy" else perplexity_text
    for c in summarize(results.measurements, metric):
        value = _with_range(c, show) if c.can_run else "not measured" if _ran(results, c) else "cannot run"
        rows.setdefault(TITLES[c.encoding], {})[f"{c.eval_len} tokens ({c.eval_len // train_len}x)"] = value
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("encoding").reset_index()


def _ran(results: ExtrapolationResults, cell: Cell) -> bool:
    return any(
        m.encoding == cell.encoding and m.eval_len == cell.eval_len and m.status != CANNOT_RUN
        for m in results.measurements
    )


def probe_table(results: ExtrapolationResults) -> pd.DataFrame:
    """One row per (encoding, depth), test lengths as columns: "retrieval (needle's distance)"."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    train_len = train_len_of(results)
    for c in summarize_probes(results.probes):
        key = (TITLES[c.encoding], percent(c.depth))
        column = f"{c.eval_len} tokens ({c.eval_len // train_len}x)"
        rows.setdefault(key, {})[column] = (
            f"{_with_range(c, percent)}, {c.distance} back" if c.can_run else "cannot run"
        )
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["encoding", "needle depth"])
    return frame.reset_index()
