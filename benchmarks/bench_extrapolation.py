"""Time the extrapolation experiment: one training step per encoding, then the whole quick mode.

    python benchmarks/bench_extrapolation.py [--steps 30] [--skip-quick]

Per encoding: the median wall and CPU time of ``--steps`` training steps at the full run's shape
(batch 16, 64 tokens, 2 layers, width 64, one thread), after a few warm-up steps. Then the quick
mode end to end (``python -m poslab.experiments.extrapolation --quick``: 5 models, training and
testing), wall and CPU. Targets on an idle 2-core machine: quick mode < 60 s; the full run (its
step count times the time per step) < 15 min. On a shared machine wall time is pessimistic; the CPU
time is closer to what an idle machine would take.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: make the project importable

import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from poslab.experiments.extrapolation import FULL, QUICK, fixed_threads, run_experiment  # noqa: E402
from poslab.experiments.tasks import IGNORE, recall_batch  # noqa: E402
from poslab.experiments.tiny_transformer import ENCODINGS, TinyDecoder  # noqa: E402

QUICK_TARGET_S = 60.0
FULL_TARGET_S = 15 * 60.0
WARMUP_STEPS = 5


def step_times(encoding: str, steps: int) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of one optimizer step at the full run's shape."""
    model = TinyDecoder(FULL.model_config(encoding))
    optimizer = torch.optim.AdamW(model.parameters(), lr=FULL.learning_rate)
    data = torch.Generator().manual_seed(0)
    walls, cpus = [], []
    for step in range(WARMUP_STEPS + steps):
        wall, cpu = time.perf_counter(), time.process_time()
        tokens, targets = recall_batch(FULL.batch_size, FULL.train_len, FULL.vocab_size, data)
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step >= WARMUP_STEPS:
            walls.append(1000 * (time.perf_counter() - wall))
            cpus.append(1000 * (time.process_time() - cpu))
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per encoding")
    parser.add_argument("--skip-quick", action="store_true", help="only the per-step times")
    args = parser.parse_args()
    print(f"training step, batch {FULL.batch_size} x {FULL.train_len} tokens, {FULL.threads} thread(s):")
    cpu_per_step = []
    with fixed_threads(FULL.threads):
        for encoding in ENCODINGS:
            wall, cpu = step_times(encoding, args.steps)
            cpu_per_step.append(cpu)
            print(f"  {encoding:<11} {wall:7.1f} ms wall  {cpu:7.1f} ms CPU")
    mean_cpu = statistics.mean(cpu_per_step)
    full_steps = len(FULL.encodings) * len(FULL.seeds) * FULL.steps
    quick_steps = len(QUICK.encodings) * len(QUICK.seeds) * QUICK.steps
    print(f"predicted from CPU time: full run {full_steps} steps ~ {full_steps * mean_cpu / 1000:.0f} s "
          f"(target {FULL_TARGET_S:.0f} s), quick {quick_steps} steps ~ {quick_steps * mean_cpu / 1000:.0f} s "
          f"of training (target {QUICK_TARGET_S:.0f} s with testing)")
    if args.skip_quick:
        return 0
    wall, cpu = time.perf_counter(), time.process_time()
    results = run_experiment(QUICK, "quick", "bench")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    best = max(m.accuracy for m in results.measurements if m.eval_len == QUICK.train_len)
    verdict = "meets" if wall < QUICK_TARGET_S else "misses"
    print(f"quick mode: {wall:.1f} s wall ({verdict} the {QUICK_TARGET_S:.0f} s target), {cpu:.1f} s CPU, "
          f"{results.record.ms_per_step:.1f} ms wall / {results.record.cpu_ms_per_step:.1f} ms CPU per step; "
          f"best accuracy at {QUICK.train_len} tokens {best:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
