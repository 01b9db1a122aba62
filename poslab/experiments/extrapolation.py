"""Train short, test long: how far does each positional encoding carry a skill past its training length?

A toy version of the first figure of Press et al., "Train Short, Test Long" (ALiBi, ICLR 2022):
one small decoder (``tiny_transformer``) per encoding and seed learns the recall task (``tasks``) on
sequences of ``train_len`` tokens (``training``), then is scored on sequences 1, 2, 4 and 8 times as
long: accuracy and perplexity over every scored position, the passkey probe (``passkey``), one
needle at a chosen depth, and the two-hop probe (``two_hop``), a chain of two needles. The RoPE
model is also tested with PI, NTK-aware scaling and YaRN (``rope_arms``), with no new training
(``measure``). A learned table has no rows past ``train_len``: those cells are recorded as
``cannot_run``, never as a number.

    python -m poslab.experiments.extrapolation --out results.csv          # full run
    python -m poslab.experiments.extrapolation --out quick.csv --quick    # one seed, short training

With ``--progress json`` the progress goes to stdout, one JSON object a line (``RunProgress``), for
a program that runs this command as a child process (``lab_runner``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import platform
import sys
import time
import types
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import torch

import poslab
from poslab.experiments.config import FULL, QUICK, ExperimentConfig
from poslab.experiments.measure import measure_model
from poslab.experiments.result_files import save_results
from poslab.experiments.results import ExtrapolationResults, Measurement, ProbeMeasurement, RunRecord
from poslab.experiments.tasks import TASK_DESCRIPTION
from poslab.experiments.terminal_progress import ProgressBar
from poslab.experiments.tiny_transformer import ENCODINGS
from poslab.experiments.training import train_model
from poslab.threads import one_thread_for_this_process

SHIPPED_CSV = Path(__file__).resolve().parent.parent / "data" / "extrapolation.csv"
PROBE_DESCRIPTION = (
    "passkey: one key-value needle at a chosen depth in filler that never holds the key; "
    "the last token asks for the key again, and the model must predict the value"
)
TWO_HOP_DESCRIPTION = (
    "two-hop: needles A B and, later, B C in filler that never holds A or B; the model is asked A, "
    "must answer B, then C after its own answer"
)


@dataclass(frozen=True)
class RunProgress:
    fraction: float  # of the training steps done, over every run
    message: str
    runs_done: int  # models trained and tested
    runs: int


Progress = Callable[[RunProgress], None]


def versions() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "poslab": poslab.__version__,
        "machine": f"{platform.machine()} {platform.processor() or platform.system()}",
    }


@dataclass(frozen=True)
class RunOutcome:
    """One trained model's measurements and what training it cost."""

    measurements: tuple[Measurement, ...]
    probes: tuple[ProbeMeasurement, ...]
    train_wall_s: float
    train_cpu_s: float


def train_and_evaluate(
    config: ExperimentConfig, encoding: str, seed: int, on_step: Callable[[int], None] | None = None
) -> RunOutcome:
    """One (encoding, seed) run on the calling process's torch threads. The command line and its
    pool run one thread per process (``poslab.threads``), so a seed gives the same numbers."""
    wall, cpu = time.perf_counter(), time.process_time()
    model = train_model(config, encoding, seed, on_step)
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
    measurements, probes = measure_model(model, config, encoding, seed)
    return RunOutcome(tuple(measurements), tuple(probes), train_wall, train_cpu)


def _outcomes_in_this_process(config, runs, on_progress: Progress | None) -> list[RunOutcome]:
    outcomes = []
    for index, (encoding, seed) in enumerate(runs):

        def on_step(step: int, index: int = index, encoding: str = encoding, seed: int = seed) -> None:
            if on_progress is not None and (step % 10 == 0 or step == config.steps):
                testing = "; testing" if step == config.steps else ""
                on_progress(
                    RunProgress(
                        (index * config.steps + step) / (len(runs) * config.steps),
                        f"{encoding}, seed {seed}: step {step}/{config.steps}{testing}",
                        index,
                        len(runs),
                    )
                )

        outcomes.append(train_and_evaluate(config, encoding, seed, on_step))
        if on_progress is not None:
            on_progress(RunProgress((index + 1) / len(runs), f"{encoding}, seed {seed}: done", index + 1, len(runs)))
    return outcomes


@contextmanager
def _callers_main_left_out() -> Iterator[None]:
    """While the pool's processes start: a bare ``__main__``, so that spawn does not run the caller's.

    multiprocessing's spawn runs the file of the caller's ``__main__`` again in each child (as
    ``__mp_main__``), to find what was pickled from it. Nothing the pool runs is there (its task is
    named by its module, ``_pool_task``), and that file may not be fit to run: Streamlit installs
    the page script as ``__main__`` and leaves it there, so in a process that has run a page (the
    app's, AppTest's) every child ran app.py again, or died on AppTest's script ("A process in the
    process pool was terminated abruptly"). A module without a file or a spec is left alone."""
    saved = sys.modules.get("__main__")
    bare = types.ModuleType("__main__")
    sys.modules["__main__"] = bare
    try:
        yield
    finally:
        if sys.modules.get("__main__") is bare and saved is not None:  # unless another thread set its own
            sys.modules["__main__"] = saved


def _pool_task() -> Callable[..., RunOutcome]:
    """``train_and_evaluate`` under this module's own name, also when it runs as ``__main__``
    (``python -m``): a child imports it by that name, with no ``__main__`` of the caller's."""
    return importlib.import_module("poslab.experiments.extrapolation").train_and_evaluate


def _outcomes_in_processes(config, runs, on_progress: Progress | None, jobs: int) -> list[RunOutcome]:
    # Each run is seeded and single-threaded, so a pool changes the wall time, not the numbers.
    # spawn, not fork: forking a process that has run torch's thread pool can deadlock.
    context = multiprocessing.get_context("spawn")
    task = _pool_task()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=one_thread_for_this_process) as pool:
        with _callers_main_left_out():  # the processes start here, at the submits (spawn starts them on demand)
            futures = {pool.submit(task, config, encoding, seed): index for index, (encoding, seed) in enumerate(runs)}
        outcomes: list[RunOutcome | None] = [None] * len(runs)
        for done, future in enumerate(as_completed(futures), start=1):
            index = futures[future]
            outcomes[index] = future.result()
            if on_progress is not None:
                encoding, seed = runs[index]
                on_progress(
                    RunProgress(
                        done / len(runs), f"{encoding}, seed {seed}: done ({done}/{len(runs)} runs)", done, len(runs)
                    )
                )
    return outcomes


def run_experiment(
    config: ExperimentConfig, mode: str, command: str, on_progress: Progress | None = None, jobs: int = 1
) -> ExtrapolationResults:
    """Every encoding and seed of ``config``, ``jobs`` runs at a time (``jobs`` 1: in this process)."""
    runs = [(encoding, seed) for seed in config.seeds for encoding in config.encodings]
    started = time.perf_counter()
    if jobs > 1 and len(runs) > 1:
        outcomes = _outcomes_in_processes(config, runs, on_progress, min(jobs, len(runs)))
    else:
        outcomes = _outcomes_in_this_process(config, runs, on_progress)
    total_steps = len(runs) * config.steps
    plain_config = json.loads(json.dumps(asdict(config)))  # tuples become lists, as after a JSON round trip
    record = RunRecord(
        command=command,
        mode=mode,
        seeds=config.seeds,
        config=plain_config,
        task=TASK_DESCRIPTION,
        chance_accuracy=config.chance_accuracy,
        versions=versions(),
        run_time_s=round(time.perf_counter() - started, 1),
        ms_per_step=round(1000 * sum(o.train_wall_s for o in outcomes) / total_steps, 1),
        cpu_ms_per_step=round(1000 * sum(o.train_cpu_s for o in outcomes) / total_steps, 1),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        probe=PROBE_DESCRIPTION,
        probe_chance=config.probe_chance,
        cores=os.cpu_count(),
        load_average=round(os.getloadavg()[0], 1),
        two_hop=TWO_HOP_DESCRIPTION,
        two_hop_chance=config.two_hop_chance,
    )
    return ExtrapolationResults(
        tuple(m for o in outcomes for m in o.measurements), record, tuple(p for o in outcomes for p in o.probes)
    )


def _json_lines(progress: RunProgress) -> None:
    print(json.dumps(asdict(progress)), flush=True)


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m poslab.experiments.extrapolation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="CSV to write (a _passkey.csv and a .json sidecar go beside it)"
    )
    parser.add_argument("--quick", action="store_true", help="one seed and short training (under a minute)")
    parser.add_argument("--seeds", type=int, nargs="+", help="override the seeds")
    parser.add_argument("--steps", type=int, help="override the number of training steps")
    parser.add_argument("--encodings", nargs="+", choices=ENCODINGS, help="train only these encodings")
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="training runs at once, one process and one thread each (default: the cores, at most 2)",
    )
    parser.add_argument(
        "--progress",
        choices=("bar", "json"),
        default="bar",
        help="a bar on stderr (default), or JSON lines on stdout for a program to read",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    one_thread_for_this_process()  # this process runs the experiment and nothing else
    config = QUICK if args.quick else FULL
    overrides = {"seeds": tuple(args.seeds or ()), "steps": args.steps, "encodings": tuple(args.encodings or ())}
    config = replace(config, **{name: value for name, value in overrides.items() if value})
    command = "python -m poslab.experiments.extrapolation " + " ".join(sys.argv[1:] if argv is None else argv)
    mode = "quick" if args.quick else "full"
    if args.progress == "json":
        results = run_experiment(config, mode, command, _json_lines, jobs=args.jobs)
    else:
        with ProgressBar(sys.stderr) as bar:
            results = run_experiment(config, mode, command, lambda p: bar.update(p.fraction, p.message), jobs=args.jobs)
    save_results(results, args.out)
    record = results.record
    print(
        f"wrote {args.out} ({len(results.measurements)} rows) in {record.run_time_s:.0f} s; per training "
        f"step {record.ms_per_step:.1f} ms wall, {record.cpu_ms_per_step:.1f} ms CPU",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
