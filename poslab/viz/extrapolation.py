"""The extrapolation lab: what the page shows of one set of train-short-test-long results.

Everything here is computed from an ``ExtrapolationResults`` (the shipped files or a live quick
run): the charts of accuracy, perplexity and passkey retrieval (``extrapolation_charts``), the
tables (``extrapolation_data``), and the sentences that read them (``extrapolation_reading``,
``passkey_reading``).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import pandas as pd

from poslab.experiments.extrapolation import SHIPPED_CSV
from poslab.experiments.lab_runner import FinishedRun, LabProgressCallback, QuickRuns
from poslab.experiments.result_files import load_results
from poslab.experiments.results import ExtrapolationResults
from poslab.viz.extrapolation_charts import Measure, length_chart
from poslab.viz.extrapolation_data import (
    TITLES,
    chart_frame,
    percent,
    probe_frame,
    probe_table,
    summary_table,
    train_len_of,
)
from poslab.viz.extrapolation_extension import effective_table, extension_reading, scores_table
from poslab.viz.extrapolation_reading import reading
from poslab.viz.passkey_charts import distance_chart, distance_frame, passkey_chart
from poslab.viz.passkey_reading import perplexity_reading, probe_reading


def length_description(results: ExtrapolationResults, measure: Measure, show) -> str:
    """Each encoding's value at the training length and at the longest length it can run."""
    metric = "perplexity" if measure.log else "accuracy"
    frame, train_len = chart_frame(results, metric), train_len_of(results)
    parts = []
    for encoding, rows in frame.groupby("encoding", sort=False):
        ran = rows[rows["status"] == "ok"].sort_values("eval_len")
        if ran.empty:
            parts.append(f"{encoding}: {'cannot run' if metric == 'accuracy' else 'not measured'}")
            continue
        at_train = ran.loc[ran["eval_len"] == train_len, "mean"]
        start = f"{show(at_train.iloc[0])} at {train_len}" if len(at_train) else "not measured at the training length"
        longest = ran.iloc[-1]
        parts.append(
            f"{encoding}: {start}, {show(longest['mean'])} at {int(longest['eval_len'])} tokens"
            + ("" if len(ran) == len(rows) else ", cannot run longer")
        )
    return (
        f"Line chart of {measure.name} against evaluation length (log scale), one line per encoding with its "
        f"seed range as a band; trained at {train_len} tokens, {measure.reference_label}. " + "; ".join(parts) + "."
    )


def passkey_description(results: ExtrapolationResults, eval_len: int) -> str:
    frame = probe_frame(results)
    frame = frame[frame["eval_len"] == eval_len]
    parts = []
    for encoding, rows in frame.groupby("encoding", sort=False):
        ran = rows[rows["status"] == "ok"].sort_values("distance")
        parts.append(
            f"{encoding}: cannot run"
            if ran.empty
            else f"{encoding}: "
            + ", ".join(f"{percent(row['mean'])} at {int(row['distance'])} back" for _, row in ran.iterrows())
        )
    return (
        f"Line chart of passkey retrieval at {eval_len} tokens against the needle's depth, each depth labelled "
        f"with its distance from the query, one line per arm with its seed range as a band. " + "; ".join(parts) + "."
    )


def distance_description(results: ExtrapolationResults, arm: str) -> str:
    frame = distance_frame(results, arm)
    parts = [
        f"{length}: " + ", ".join(f"{percent(r['mean'])} at {int(r['distance'])} back" for _, r in rows.iterrows())
        for length, rows in frame.sort_values(["eval_len", "distance"]).groupby("length", sort=False)
    ]
    return (
        f"Line chart of {TITLES[arm]}'s passkey retrieval against the needle's distance from the query (log scale), "
        f"one line per test length. " + ("; ".join(parts) if parts else "No length could run") + "."
    )


def accuracy_measure(results: ExtrapolationResults) -> Measure:
    chance = results.record.chance_accuracy
    return Measure("accuracy", "share of scored positions", False, chance, f"chance {percent(chance)}", ".1%")


def perplexity_measure(results: ExtrapolationResults) -> Measure:
    vocab = round(1 / results.record.chance_accuracy)
    return Measure("perplexity", "of the answers, log scale", True, float(vocab), f"uniform guess {vocab}", ".2f")


@dataclass(frozen=True)
class ExtrapolationView:
    accuracy_chart: alt.LayerChart
    reading: str  # Markdown
    table: pd.DataFrame
    perplexity_chart: alt.LayerChart | None  # None: files made before perplexity was measured
    perplexity_reading: str
    perplexity_table: pd.DataFrame
    passkey_charts: dict[int, alt.LayerChart]  # per test length; empty: a run without the probe
    probe_reading: str
    probe_table: pd.DataFrame | None
    distance_charts: dict[str, alt.LayerChart]  # per arm (its title); empty: a run without the probe
    extension_reading: str
    effective_table: pd.DataFrame
    scores_table: pd.DataFrame
    provenance: str  # Markdown
    run_time_s: float


def view(results: ExtrapolationResults, title: str) -> ExtrapolationView:
    accuracy = accuracy_measure(results)
    perplexity = perplexity_measure(results)
    has_perplexity = any(m.perplexity is not None for m in results.measurements)
    lengths = sorted({p.eval_len for p in results.probes})
    return ExtrapolationView(
        length_chart(results, accuracy, f"{title}: accuracy", length_description(results, accuracy, percent)),
        reading(results),
        summary_table(results),
        length_chart(
            results,
            perplexity,
            f"{title}: perplexity",
            length_description(results, perplexity, lambda value: f"{value:.1f}"),
        )
        if has_perplexity
        else None,
        perplexity_reading(results),
        summary_table(results, "perplexity"),
        {
            length: passkey_chart(
                results, length, f"{title}: passkey retrieval at {length} tokens", passkey_description(results, length)
            )
            for length in lengths
        },
        probe_reading(results),
        probe_table(results) if results.probes else None,
        {
            TITLES[arm]: distance_chart(
                results,
                arm,
                f"{title}: {TITLES[arm]}'s passkey retrieval by distance",
                distance_description(results, arm),
            )
            for arm in sorted({p.encoding for p in results.probes}, key=list(TITLES).index)
            if not distance_frame(results, arm).empty
        },
        extension_reading(results),
        effective_table(results),
        scores_table(results),
        provenance(results),
        results.record.run_time_s,
    )


def provenance(results: ExtrapolationResults) -> str:
    """Where the numbers come from: command, seeds, training, time, versions (all from the sidecar)."""
    r, c = results.record, results.record.config
    minutes, seconds = divmod(round(r.run_time_s), 60)
    probe = (
        f" Passkey probe: {c['probe_trials']} needles per seed at each of {len(c['probe_depths'])} depths and "
        f"{len(c['eval_multiples'])} lengths."
        if r.probe
        else " No passkey probe in this run."
    )
    return (
        f"{r.mode.capitalize()} run: `{shown_command(r.command)}`; {len(c['encodings'])} encodings x seeds "
        f"{', '.join(map(str, r.seeds))} x {c['steps']} steps of batch {c['batch_size']} at "
        f"{c['train_len']} tokens, vocabulary {c['vocab_size']}, {c['n_layers']} layers, width {c['d_model']}."
        f"{probe}{_arms(c)} Took {minutes} min {seconds:02d} s ({r.cpu_ms_per_step:.0f} ms of CPU per training "
        f"step); torch {r.versions.get('torch', '?')}, finished {r.finished_at}."
    )


def _arms(config: dict) -> str:
    scalings = config.get("rope_scalings")
    if not scalings or "rope" not in config.get("encodings", ()):
        return ""
    return (
        f" RoPE also tested with {', '.join(scalings)} from the course's schedules, at factor test length / "
        f"{config['train_len']}, with no new training; a two-hop probe with the same needles per cell."
    )


def shown_command(command: str) -> str:
    """The command with each file given by its name alone: where it was written on the server is not the
    student's business (a quick run's folder is a temporary one anyway)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    return shlex.join(Path(word).name if "/" in word and not word.startswith("-") else word for word in words)


def quick_estimate(last: FinishedRun | None, running: int, slots: int, now: float | None = None) -> str:
    """What the next quick run will take, from the last one that finished on this server: nothing
    measured on another machine. Before any has finished, the run's own pace gives the time left."""
    if last is None:
        text = (
            "No quick run has finished on this server yet, so there is no time to go by: the progress "
            "bar shows the time left from the run's own pace once its first model is done."
        )
    else:
        ago = max(0, round(((now or time.time()) - last.finished_at) / 60))
        shared = f", with {last.runs_at_once} runs at once" if last.runs_at_once > 1 else ""
        text = (
            f"The last quick run on this server took {last.wall_s:.0f} s{shared} "
            f"({'just now' if ago == 0 else f'{ago} min ago'})."
        )
    if running:
        text += (
            f" {running} quick run{'s are' if running > 1 else ' is'} going now; at most {slots} at a "
            f"time, each on one core."
        )
    return text


def shipped_view(csv_path: str = str(SHIPPED_CSV)) -> ExtrapolationView:
    """The results that ship with the course (``poslab/data/extrapolation.csv``)."""
    results = load_results(Path(csv_path))
    return view(results, f"Shipped run ({len(results.record.seeds)} seeds)")


def quick_run_view(
    runs: QuickRuns,
    seed: int,
    on_progress: LabProgressCallback,
    steps: int | None = None,
    encodings: tuple[str, ...] = (),
) -> ExtrapolationView:
    """Train the quick mode now, in a child process (``lab_runner``); ``steps``/``encodings`` shorten it."""
    results = runs.run(seed, on_progress, steps=steps, encodings=encodings)
    return view(results, f"Your quick run (seed {seed}, {results.record.config['steps']} steps)")
