"""Train short, test long: how far does each positional encoding carry a skill past its training length?

A toy version of the first figure of Press et al., "Train Short, Test Long" (ALiBi, ICLR 2022):
one small decoder (``tiny_transformer``) per encoding and seed learns the recall task (``tasks``) on
sequences of ``train_len`` tokens, then is scored on sequences 1, 2, 4 and 8 times as long. Accuracy
is over every scored position of a test sequence, so positions before ``train_len`` count too, as
they do in the paper's perplexities. A learned table has no rows past ``train_len``: those cells are
recorded as ``cannot_run``, never as a number.

    python -m poslab.experiments.extrapolation --out results.csv          # full run
    python -m poslab.experiments.extrapolation --out quick.csv --quick    # one seed, short training
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import torch
from torch.nn import functional as F

import poslab
from poslab.experiments.terminal_progress import ProgressBar
from poslab.experiments.results import (
    CANNOT_RUN,
    OK,
    ExtrapolationResults,
    Measurement,
    RunRecord,
    save_results,
)
from poslab.experiments.tasks import IGNORE, TASK_DESCRIPTION, recall_batch
from poslab.experiments.tiny_transformer import ENCODINGS, CannotRun, ModelConfig, TinyDecoder

SHIPPED_CSV = Path(__file__).resolve().parent.parent / "data" / "extrapolation.csv"
EVAL_SEED_OFFSET = 10_000  # test sequences come from their own stream, the same for every encoding

Progress = Callable[[float, str], None]  # (fraction done, message)


@dataclass(frozen=True)
class ExperimentConfig:
    encodings: tuple[str, ...] = ENCODINGS
    seeds: tuple[int, ...] = (0, 1, 2)
    train_len: int = 64
    eval_multiples: tuple[int, ...] = (1, 2, 4, 8)
    vocab_size: int = 16
    steps: int = 800
    batch_size: int = 16
    learning_rate: float = 3e-3
    warmup_steps: int = 50
    weight_decay: float = 0.01
    eval_tokens: int = 16_384  # test tokens per evaluation length (fewer, longer sequences as it grows)
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    threads: int = 1  # fixed, so that a seed gives the same numbers on every run

    @property
    def eval_lens(self) -> tuple[int, ...]:
        return tuple(self.train_len * multiple for multiple in self.eval_multiples)

    @property
    def chance_accuracy(self) -> float:
        return 1.0 / self.vocab_size

    def model_config(self, encoding: str) -> ModelConfig:
        return ModelConfig(encoding, self.vocab_size, self.train_len, self.n_layers, self.n_heads, self.d_model)


# Step counts from measured learning curves (batch 16, lr 3e-3, accuracy at 64 tokens): RoPE jumps
# from ~20% to ~92% between steps 100 and 150 (the induction head forming); ALiBi reaches ~80% by 200
# and ~92% by 600; sinusoidal ~80% by 200 and ~98% by 600; learned and NoPE are slower. One step
# costs ~45 ms of CPU on the course machine, so the full run is ~12,000 steps, ~10 min on one core.
FULL = ExperimentConfig()
# Quick mode: the same model in 150 steps. Measured at 64 tokens over seeds 0-2: with the full run's
# lr and warmup RoPE reached 48-73% and ALiBi 60-65%; a higher lr and shorter warmup, at the same
# cost, gave RoPE 72-91%, ALiBi 67-71%, sinusoidal 39-48%.
QUICK = replace(FULL, seeds=(0,), steps=150, learning_rate=4e-3, warmup_steps=20, eval_tokens=4_096)


@contextmanager
def fixed_threads(count: int) -> Iterator[None]:
    """Run torch on ``count`` threads and restore the caller's setting afterwards (the app shares it)."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def learning_rate_factor(step: int, config: ExperimentConfig) -> float:
    """Linear warmup, then a cosine decay to a tenth of the peak."""
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))


def train_model(config: ExperimentConfig, encoding: str, seed: int,
                on_step: Callable[[int], None] | None = None) -> TinyDecoder:
    """Train one model on ``train_len``-token sequences; the seed fixes both the weights and the data."""
    with torch.random.fork_rng(devices=[]):  # seed the weights without touching the caller's global RNG
        torch.manual_seed(seed)
        model = TinyDecoder(config.model_config(encoding))
    data = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: learning_rate_factor(step, config))
    model.train()
    for step in range(config.steps):
        tokens, targets = recall_batch(config.batch_size, config.train_len, config.vocab_size, data)
        logits = model(tokens)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)  # (B*T, V) vs (B*T,)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if on_step is not None:
            on_step(step + 1)
    return model.eval()


@torch.no_grad()
def evaluate(model: TinyDecoder, config: ExperimentConfig, eval_len: int, seed: int) -> float:
    """Share of scored positions predicted right on ``eval_len``-token sequences; ``CannotRun`` past a table."""
    model.check_length(eval_len)
    data = torch.Generator().manual_seed(EVAL_SEED_OFFSET + seed)
    n_sequences = max(1, config.eval_tokens // eval_len)
    chunk = max(1, 4_096 // eval_len)  # bounds the (B, H, T, T) attention weights in memory
    correct = scored = 0
    for start in range(0, n_sequences, chunk):
        tokens, targets = recall_batch(min(chunk, n_sequences - start), eval_len, config.vocab_size, data)
        predictions = model(tokens).argmax(dim=-1)  # (B, T)
        has_answer = targets != IGNORE
        correct += int((predictions.eq(targets) & has_answer).sum())
        scored += int(has_answer.sum())
    return correct / scored


def evaluate_all(model: TinyDecoder, config: ExperimentConfig, encoding: str, seed: int) -> list[Measurement]:
    """One Measurement per evaluation length; a length the model cannot represent is ``cannot_run``."""
    rows = []
    for eval_len in config.eval_lens:
        try:
            accuracy, status = evaluate(model, config, eval_len, seed), OK
        except CannotRun:
            accuracy, status = None, CANNOT_RUN
        rows.append(Measurement(encoding, seed, config.train_len, eval_len, accuracy, status))
    return rows


def versions() -> dict[str, str]:
    return {"python": platform.python_version(), "torch": torch.__version__, "poslab": poslab.__version__,
            "machine": f"{platform.machine()} {platform.processor() or platform.system()}"}


@dataclass(frozen=True)
class RunOutcome:
    """One trained model's measurements and what training it cost."""

    measurements: tuple[Measurement, ...]
    train_wall_s: float
    train_cpu_s: float


def train_and_evaluate(config: ExperimentConfig, encoding: str, seed: int,
                       on_step: Callable[[int], None] | None = None) -> RunOutcome:
    """One (encoding, seed) run on ``config.threads`` threads; the same numbers in any process."""
    with fixed_threads(config.threads):
        wall, cpu = time.perf_counter(), time.process_time()
        model = train_model(config, encoding, seed, on_step)
        train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu
        return RunOutcome(tuple(evaluate_all(model, config, encoding, seed)), train_wall, train_cpu)


def _outcomes_in_this_process(config, runs, on_progress) -> list[RunOutcome]:
    outcomes = []
    for index, (encoding, seed) in enumerate(runs):
        def on_step(step: int, index: int = index, encoding: str = encoding, seed: int = seed) -> None:
            if on_progress is not None and (step % 10 == 0 or step == config.steps):
                on_progress((index * config.steps + step) / (len(runs) * config.steps),
                            f"{encoding}, seed {seed}: step {step}/{config.steps}")
        outcomes.append(train_and_evaluate(config, encoding, seed, on_step))
    return outcomes


def _outcomes_in_processes(config, runs, on_progress, jobs: int) -> list[RunOutcome]:
    # Each run is seeded and single-threaded, so a pool changes the wall time, not the numbers.
    # spawn, not fork: forking a process that has run torch's thread pool can deadlock.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(train_and_evaluate, config, encoding, seed): index
                   for index, (encoding, seed) in enumerate(runs)}
        outcomes: list[RunOutcome | None] = [None] * len(runs)
        for done, future in enumerate(as_completed(futures), start=1):
            index = futures[future]
            outcomes[index] = future.result()
            if on_progress is not None:
                encoding, seed = runs[index]
                on_progress(done / len(runs), f"{encoding}, seed {seed}: done ({done}/{len(runs)} runs)")
    return outcomes


def run_experiment(config: ExperimentConfig, mode: str, command: str,
                   on_progress: Progress | None = None, jobs: int = 1) -> ExtrapolationResults:
    """Every encoding and seed of ``config``, ``jobs`` runs at a time; ``on_progress(fraction, message)``."""
    runs = [(encoding, seed) for seed in config.seeds for encoding in config.encodings]
    started = time.perf_counter()
    if jobs > 1 and len(runs) > 1:
        outcomes = _outcomes_in_processes(config, runs, on_progress, min(jobs, len(runs)))
    else:
        outcomes = _outcomes_in_this_process(config, runs, on_progress)
    total_steps = len(runs) * config.steps
    plain_config = json.loads(json.dumps(asdict(config)))  # tuples become lists, as after a JSON round trip
    record = RunRecord(command=command, mode=mode, seeds=config.seeds, config=plain_config,
                       task=TASK_DESCRIPTION, chance_accuracy=config.chance_accuracy, versions=versions(),
                       run_time_s=round(time.perf_counter() - started, 1),
                       ms_per_step=round(1000 * sum(o.train_wall_s for o in outcomes) / total_steps, 1),
                       cpu_ms_per_step=round(1000 * sum(o.train_cpu_s for o in outcomes) / total_steps, 1),
                       finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return ExtrapolationResults(tuple(m for outcome in outcomes for m in outcome.measurements), record)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m poslab.experiments.extrapolation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="CSV to write (a .json sidecar goes beside it)")
    parser.add_argument("--quick", action="store_true", help="one seed and short training (about a minute)")
    parser.add_argument("--seeds", type=int, nargs="+", help="override the seeds")
    parser.add_argument("--steps", type=int, help="override the number of training steps")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="training runs at once, one process and one thread each (default: the cores, at most 2)")
    args = parser.parse_args(argv)
    config = QUICK if args.quick else FULL
    if args.seeds:
        config = replace(config, seeds=tuple(args.seeds))
    if args.steps:
        config = replace(config, steps=args.steps)
    command = "python -m poslab.experiments.extrapolation " + " ".join(sys.argv[1:] if argv is None else argv)
    with ProgressBar(sys.stderr) as bar:
        results = run_experiment(config, "quick" if args.quick else "full", command, bar.update, jobs=args.jobs)
    save_results(results, args.out)
    record = results.record
    print(f"wrote {args.out} ({len(results.measurements)} rows) in {record.run_time_s:.0f} s; per training "
          f"step {record.ms_per_step:.1f} ms wall, {record.cpu_ms_per_step:.1f} ms CPU", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
