"""The extrapolation lab: summary, chart and a reading of train-short-test-long results.

Everything here is computed from an ``ExtrapolationResults`` (the shipped CSV or a live quick
run): the per-length mean and seed spread, the Altair chart, the table, and the sentences that
say which encoding held up, which failed, and which could not run at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from statistics import mean
from typing import Callable, Sequence

import altair as alt
import pandas as pd

from poslab.experiments.extrapolation import QUICK, SHIPPED_CSV, run_experiment
from poslab.experiments.results import CANNOT_RUN, ExtrapolationResults, Measurement, load_results
from poslab.experiments.tiny_transformer import ENCODINGS
from poslab.viz.common import axis_title, y_axis_title

TITLES = {"none": "NoPE", "sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
          "alibi": "ALiBi"}
COLORS = {"none": "#7f7f7f", "sinusoidal": "#1f77b4", "learned": "#9467bd", "rope": "#ff7f0e", "alibi": "#2ca02c"}
LEARNED_THRESHOLD = 0.5  # "learned the task" = at least half of the scored positions right at the training length
HELD_UP, FAILED = 0.9, 0.5  # share of the margin over chance kept at the longest length
PARTIAL_FACTOR = 2.0  # below LEARNED_THRESHOLD but at least twice chance: judged too, as a partial learner


@dataclass(frozen=True)
class Cell:
    """One encoding at one evaluation length, over its seeds."""

    encoding: str
    eval_len: int
    n_seeds: int
    mean: float | None  # None when no seed could run
    low: float | None  # lowest seed
    high: float | None  # highest seed

    @property
    def can_run(self) -> bool:
        return self.mean is not None


def summarize(measurements: Sequence[Measurement]) -> tuple[Cell, ...]:
    """Mean and min-max over seeds, per (encoding, eval_len), in ``ENCODINGS`` order."""
    groups: dict[tuple[str, int], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.encoding, m.eval_len), []).append(m)
    cells = []
    for (encoding, eval_len), rows in sorted(groups.items(), key=lambda item: (ENCODINGS.index(item[0][0]),
                                                                               item[0][1])):
        scores = [m.accuracy for m in rows if m.status != CANNOT_RUN]
        cells.append(Cell(encoding, eval_len, len(rows), mean(scores) if scores else None,
                          min(scores) if scores else None, max(scores) if scores else None))
    return tuple(cells)


def _train_len(results: ExtrapolationResults) -> int:
    return results.measurements[0].train_len


def _percent(value: float) -> str:
    return f"{100 * value:.0f}%"


def chart_frame(results: ExtrapolationResults) -> pd.DataFrame:
    """One row per cell: encoding title, eval_len, multiple, mean/low/high (NaN when it cannot run)."""
    train_len = _train_len(results)
    return pd.DataFrame([{
        "encoding": TITLES[c.encoding], "eval_len": c.eval_len, "multiple": c.eval_len // train_len,
        "mean": c.mean, "low": c.low, "high": c.high, "seeds": c.n_seeds,
        "status": "ok" if c.can_run else "cannot run",
    } for c in summarize(results.measurements)])


def accuracy_chart(results: ExtrapolationResults, title: str) -> alt.LayerChart:
    """Accuracy against evaluation length (log scale), one line per encoding with its seed band."""
    frame = chart_frame(results)
    train_len, chance = _train_len(results), results.record.chance_accuracy
    lengths = sorted(frame["eval_len"].unique().tolist())
    palette = alt.Scale(domain=[TITLES[e] for e in ENCODINGS], range=[COLORS[e] for e in ENCODINGS])
    x = alt.X("eval_len:Q", title=axis_title("evaluation length", "tokens, log scale"),
              scale=alt.Scale(type="log", base=2, domain=[lengths[0] / 1.15, lengths[-1] * 1.15]),
              axis=alt.Axis(values=lengths, format="d",
                            labelExpr=f"datum.value == {train_len} ? '{train_len} (trained)' : datum.label"))
    y_title, y_scale = y_axis_title("accuracy", "share of scored positions"), alt.Scale(domain=[0, 1])
    y = alt.Y("mean:Q", title=y_title, scale=y_scale, axis=alt.Axis(format="%"))
    tooltip = [alt.Tooltip("encoding:N"), alt.Tooltip("eval_len:Q", title="evaluation length (tokens)"),
               alt.Tooltip("multiple:Q", title="x training length"),
               alt.Tooltip("mean:Q", title="mean accuracy", format=".1%"),
               alt.Tooltip("low:Q", title="lowest seed", format=".1%"),
               alt.Tooltip("high:Q", title="highest seed", format=".1%"), alt.Tooltip("seeds:Q")]
    runs = alt.Chart(frame[frame["status"] == "ok"])
    # One legend for every layer (switching it off in one switches it off in all), drawn at full opacity:
    # the faint band's swatches made it look switched off. Each encoding also has its own point shape
    # and dash, so colour is not the only thing telling them apart.
    legend = alt.Legend(orient="bottom", labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2)
    band = runs.mark_area(opacity=0.2).encode(x=x, y=alt.Y("low:Q", title=y_title, scale=y_scale), y2="high:Q",
                                              color=alt.Color("encoding:N", title="encoding", scale=palette,
                                                              legend=legend), tooltip=tooltip)
    titles = [TITLES[e] for e in ENCODINGS]
    lines = runs.mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=x, y=y, color=alt.Color("encoding:N", title="encoding", scale=palette, legend=legend),
        shape=alt.Shape("encoding:N", title="encoding", scale=alt.Scale(domain=titles), legend=legend),
        strokeDash=alt.StrokeDash("encoding:N", title="encoding", scale=alt.Scale(domain=titles), legend=legend),
        tooltip=tooltip)
    # "cannot run" sits on the floor of the chart, under the chance line: there is no accuracy to place it at.
    blocked = frame[frame["status"] == "cannot run"].groupby("encoding", as_index=False)["eval_len"].min()
    blocked = blocked.assign(label=blocked["encoding"] + ": cannot run from here on", mean=0.0)
    cannot = alt.Chart(blocked).mark_text(align="left", baseline="bottom", dx=2, dy=-1, fontSize=10,
                                              fontStyle="italic").encode(
        x=x, y=y, text="label:N", color=alt.Color("encoding:N", title="encoding", scale=palette, legend=legend),
        tooltip=[alt.Tooltip("label:N", title="status"),
                 alt.Tooltip("eval_len:Q", title="from evaluation length (tokens)")])
    marks = pd.DataFrame({"eval_len": [train_len], "mean": [chance], "chance_label": [f"chance {_percent(chance)}"]})
    trained = alt.Chart(marks).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    chance_rule = alt.Chart(marks).mark_rule(strokeDash=[2, 2], color="gray").encode(y=y)
    chance_text = alt.Chart(marks).mark_text(align="left", baseline="bottom", dx=4, dy=-2, x=0, color="gray").encode(
        y=y, text="chance_label:N")
    return alt.layer(band, lines, cannot, trained, chance_rule, chance_text, title=title).properties(
        height=380, description=accuracy_description(frame, train_len, chance))


def accuracy_description(frame: pd.DataFrame, train_len: int, chance: float) -> str:
    """Each encoding's accuracy at the training length and at the longest length it can run."""
    parts = []
    for encoding, rows in frame.groupby("encoding", sort=False):
        ran = rows[rows["status"] == "ok"].sort_values("eval_len")
        if ran.empty:
            parts.append(f"{encoding}: cannot run")
            continue
        at_train = ran.loc[ran["eval_len"] == train_len, "mean"]
        start = f"{_percent(at_train.iloc[0])} at {train_len}" if len(at_train) else "not measured at the training length"
        longest = ran.iloc[-1]
        parts.append(f"{encoding}: {start}, {_percent(longest['mean'])} at {int(longest['eval_len'])} tokens"
                     + ("" if len(ran) == len(rows) else ", cannot run longer"))
    return (f"Line chart of accuracy against evaluation length (log scale), one line per encoding with its seed "
            f"range as a band; trained at {train_len} tokens, chance is {_percent(chance)}. " + "; ".join(parts) + ".")


def summary_table(results: ExtrapolationResults) -> pd.DataFrame:
    """Encodings as rows, evaluation lengths as columns: "mean% (low-high)" or "cannot run"."""
    rows: dict[str, dict[str, str]] = {}
    train_len = _train_len(results)
    for c in summarize(results.measurements):
        column = f"{c.eval_len} tokens ({c.eval_len // train_len}x)"
        if not c.can_run:
            value = "cannot run"
        elif c.n_seeds == 1:
            value = _percent(c.mean)
        else:
            value = f"{_percent(c.mean)} ({_percent(c.low)}-{_percent(c.high)})"
        rows.setdefault(TITLES[c.encoding], {})[column] = value
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("encoding").reset_index()


def _margin_kept(at_train: Cell, at_longest: Cell, chance: float) -> float:
    """How much of its margin over chance an encoding kept, 1 = all of it, 0 = down to chance."""
    return (at_longest.mean - chance) / max(at_train.mean - chance, 1e-9)


def _names(names: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def reading(results: ExtrapolationResults) -> str:
    """A few Markdown sentences that say what these numbers show; nothing in them is written in advance."""
    cells = {(c.encoding, c.eval_len): c for c in summarize(results.measurements)}
    train_len, chance = _train_len(results), results.record.chance_accuracy
    longest = max(length for _, length in cells)
    encodings = [e for e in ENCODINGS if (e, train_len) in cells]
    at_train = {e: cells[(e, train_len)] for e in encodings}
    learned = [e for e in encodings if at_train[e].can_run and at_train[e].mean >= LEARNED_THRESHOLD]
    missed = [e for e in encodings if e not in learned]
    lines = [_training_length_sentence(at_train, learned, missed, train_len, chance)]
    runnable = [e for e in learned if cells[(e, longest)].can_run]
    # A partial learner (clearly above chance, below the bar) still has something to keep or lose.
    judged = [e for e in encodings if cells[(e, longest)].can_run and at_train[e].can_run
              and at_train[e].mean >= PARTIAL_FACTOR * chance]
    if runnable:
        lines.append(_longest_sentence(cells, runnable, train_len, longest, chance))
    lines += _verdicts(cells, judged, train_len, longest, chance)
    blocked = [e for e in encodings if not cells[(e, longest)].can_run]
    for e in blocked:
        first = min(length for (enc, length), c in cells.items() if enc == e and not c.can_run)
        lines.append(f"**{TITLES[e]} cannot run** at {first} tokens or more: its table has rows for the "
                     f"{train_len} positions it trained on and none after, so there is no number to plot.")
    lines.append(_paper_sentence(cells, learned, runnable, train_len, longest))
    if ("none", train_len) in cells:
        lines.append(_nope_sentence(cells[("none", train_len)], "none" in learned, train_len))
    if all(c.n_seeds == 1 for c in cells.values()):
        lines.append("One seed per encoding: no spread to show, so small differences may be luck.")
    return "\n\n".join(lines)


def _training_length_sentence(at_train: dict[str, Cell], learned: list[str], missed: list[str],
                              train_len: int, chance: float) -> str:
    def scores(encodings: list[str]) -> str:
        return _names([f"{TITLES[e]} ({_percent(at_train[e].mean)})"
                       for e in sorted(encodings, key=lambda e: -at_train[e].mean)])

    bar = f"at least {_percent(LEARNED_THRESHOLD)} right; chance is {_percent(chance)}"
    if not learned:
        return f"**At the training length ({train_len} tokens) no encoding learned the task** ({bar}): {scores(missed)}."
    text = f"**At the training length ({train_len} tokens)** the task was learned ({bar}) by {scores(learned)}"
    return text + (f"; not by {scores(missed)}." if missed else ".")


def _longest_sentence(cells: dict, runnable: list[str], train_len: int, longest: int, chance: float) -> str:
    ranked = sorted(runnable, key=lambda e: -cells[(e, longest)].mean)
    best = cells[(ranked[0], longest)]
    text = (f"**At {longest} tokens ({longest // train_len}x the training length) {TITLES[ranked[0]]} held up "
            f"best** with {_percent(best.mean)}")
    if best.n_seeds > 1:
        text += f" (seeds {_percent(best.low)}-{_percent(best.high)})"
    text += f", against {_percent(cells[(ranked[0], train_len)].mean)} at {train_len} tokens"
    if len(ranked) > 1:
        second = cells[(ranked[1], longest)]
        overlap = best.n_seeds > 1 and second.high >= best.low
        text += (f"; {TITLES[ranked[1]]} came next with {_percent(second.mean)}"
                 + (", within the seed spread." if overlap else "."))
    else:
        text += "."
    return text


def _verdicts(cells: dict, runnable: list[str], train_len: int, longest: int, chance: float) -> list[str]:
    def change(e: str) -> str:
        return f"{TITLES[e]} ({_percent(cells[(e, train_len)].mean)} to {_percent(cells[(e, longest)].mean)})"

    kept = {e: _margin_kept(cells[(e, train_len)], cells[(e, longest)], chance) for e in runnable}
    failed = [e for e in runnable if kept[e] < FAILED]
    faded = [e for e in runnable if FAILED <= kept[e] < HELD_UP]
    held = [e for e in runnable if kept[e] >= HELD_UP]
    lines = []
    if held:
        lines.append(f"**Held up:** {', '.join(change(e) for e in held)} kept at least {_percent(HELD_UP)} of "
                     f"{'their' if len(held) > 1 else 'its'} margin over chance.")
    if failed:
        lines.append(f"**Failed past the training length:** {', '.join(change(e) for e in failed)}: "
                     f"{'each' if len(failed) > 1 else 'it'} lost more than half of its margin over chance.")
    if faded:
        lines.append(f"**Faded:** {', '.join(change(e) for e in faded)} kept between half and "
                     f"{_percent(HELD_UP)} of {'their' if len(faded) > 1 else 'its'} margin over chance.")
    return lines


def _paper_sentence(cells: dict, learned: list[str], runnable: list[str], train_len: int, longest: int) -> str:
    if ("alibi", train_len) not in cells:
        return "This run has no ALiBi model, so it cannot be compared with the ALiBi paper."
    if "alibi" not in learned:
        return (f"ALiBi did not learn the task at {train_len} tokens here, so this run cannot test the "
                f"ALiBi paper's claim that it extrapolates best.")
    best = max(runnable, key=lambda e: cells[(e, longest)].mean)
    if best == "alibi":
        return "**As in the ALiBi paper's figure**, ALiBi extrapolated best of the encodings compared."
    return (f"**Unlike the ALiBi paper's figure**, where ALiBi extrapolated best, here {TITLES[best]} did "
            f"({_percent(cells[(best, longest)].mean)} against ALiBi's {_percent(cells[('alibi', longest)].mean)}).")


def _nope_sentence(at_train: Cell, nope_learned: bool, train_len: int) -> str:
    """Haviv et al. (2022) and Kazemnejad et al. (2023) found NoPE competitive; say whether this run agrees."""
    if nope_learned:
        return (f"NoPE learned the task ({_percent(at_train.mean)} at {train_len} tokens), in line with Haviv "
                f"et al. (2022) and Kazemnejad et al. (2023), who found NoPE decoders competitive.")
    return (f"**Unlike Haviv et al. (2022) and Kazemnejad et al. (2023)**, who found NoPE decoders competitive, "
            f"NoPE reached only {_percent(at_train.mean)} at the training length here.")


def provenance(results: ExtrapolationResults) -> str:
    """Where the numbers come from: command, seeds, training, time, versions (all from the sidecar)."""
    r, c = results.record, results.record.config
    minutes, seconds = divmod(round(r.run_time_s), 60)
    return (f"{r.mode.capitalize()} run: `{r.command}`; {len(c['encodings'])} encodings x seeds "
            f"{', '.join(map(str, r.seeds))} x {c['steps']} steps of batch {c['batch_size']} at "
            f"{c['train_len']} tokens, vocabulary {c['vocab_size']}, {c['n_layers']} layers, width {c['d_model']}. "
            f"Took {minutes} min {seconds:02d} s ({r.ms_per_step:.0f} ms wall, {r.cpu_ms_per_step:.0f} ms CPU per "
            f"training step); torch {r.versions.get('torch', '?')}, finished {r.finished_at}.")


def quick_estimate(results: ExtrapolationResults) -> str:
    """The quick mode's training time, predicted from the CPU time per step this run measured."""
    steps = len(QUICK.encodings) * len(QUICK.seeds) * QUICK.steps
    seconds = steps * results.record.cpu_ms_per_step / 1000
    return (f"Quick mode: {len(QUICK.encodings)} models x {QUICK.steps} steps. At the "
            f"{results.record.cpu_ms_per_step:.0f} ms of CPU per step measured for the shipped run, training "
            f"takes about {seconds:.0f} s on an idle core, plus a few seconds of testing.")


@dataclass(frozen=True)
class ExtrapolationView:
    chart: alt.LayerChart
    reading: str  # Markdown
    table: pd.DataFrame
    provenance: str  # Markdown
    quick_estimate: str


def view(results: ExtrapolationResults, title: str) -> ExtrapolationView:
    return ExtrapolationView(accuracy_chart(results, title), reading(results), summary_table(results),
                             provenance(results), quick_estimate(results))


def shipped_view(csv_path: str = str(SHIPPED_CSV)) -> ExtrapolationView:
    """The results that ship with the course (``poslab/data/extrapolation.csv``)."""
    results = load_results(Path(csv_path))
    return view(results, f"Shipped run: {len(results.record.seeds)} seeds per encoding")


def quick_run_view(seed: int, on_progress: Callable[[float, str], None] | None = None,
                   steps: int | None = None) -> ExtrapolationView:
    """Train the quick mode now (one seed); ``steps`` shortens it further (tests)."""
    config = replace(QUICK, seeds=(seed,), steps=steps or QUICK.steps)
    command = f"live on the page, as python -m poslab.experiments.extrapolation --quick --seeds {seed}"
    results = run_experiment(config, "quick", command, on_progress)
    return view(results, f"Your quick run: seed {seed}, {config.steps} steps")
