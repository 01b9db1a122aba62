"""Time the extrapolation experiment: a training step and a probe per encoding, then the quick mode.

    python benchmarks/bench_extrapolation.py [--steps 30] [--skip-quick]

Per encoding: the median wall and CPU time of ``--steps`` training steps at the full run's shape
(batch 16, 64 tokens, 2 layers, width 64, one thread), after a few warm-up steps, and the CPU time
of testing one model at the quick mode's size: accuracy and perplexity, then the passkey and two-hop
probes, for every arm it is tested as (RoPE: also with PI, NTK and YaRN at test time).
Then the quick mode end to end, as the page runs it and as the command line does by default:
``python -m poslab.experiments.extrapolation --quick`` in a child process with ``--jobs 1`` and with
``--jobs 2`` (5 models: training, testing and the probe; interpreter start-up included), wall and the
child's CPU time. Targets on an idle 2-core machine: quick mode < 60 s; the full run (its step count
times the time per step) < 15 min. On a shared machine wall time is pessimistic; CPU time is closer
to what an idle machine would take, and the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make the project importable

import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from poslab.experiments.config import FULL, QUICK  # noqa: E402
from poslab.experiments.measure import evaluate_all  # noqa: E402
from poslab.experiments.passkey import probe  # noqa: E402
from poslab.experiments.tasks import IGNORE, recall_batch  # noqa: E402
from poslab.experiments.tiny_transformer import ENCODINGS, TinyDecoder  # noqa: E402
from poslab.experiments.training import train_model  # noqa: E402
from poslab.experiments.two_hop import probe_two_hop  # noqa: E402
from poslab.threads import one_thread_for_this_process  # noqa: E402

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


def testing_cpu_s(encoding: str) -> tuple[float, float, float]:
    """CPU seconds of testing one (barely trained) model at the quick mode's size, over all its arms:
    (accuracy and perplexity, passkey probe, two-hop probe)."""
    model = train_model(replace(QUICK, steps=1), encoding, 0)
    times = [0.0, 0.0, 0.0]
    for arm in QUICK.arms_of(encoding):
        for index, step in enumerate((evaluate_all, probe, probe_two_hop)):
            cpu = time.process_time()
            step(model, QUICK, arm, 0)
            times[index] += time.process_time() - cpu
    return times[0], times[1], times[2]


def quick_mode(jobs: int) -> tuple[float, float]:
    """Wall and children's CPU seconds of the quick mode's command, as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        wall = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "poslab.experiments.extrapolation",
                "--out",
                f"{folder}/q.csv",
                "--quick",
                "--jobs",
                str(jobs),
            ],
            cwd=ROOT,
            check=True,
            stderr=subprocess.DEVNULL,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
        )
        wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="timed steps per encoding")
    parser.add_argument("--skip-quick", action="store_true", help="only the per-step and testing times")
    args = parser.parse_args()
    one_thread_for_this_process()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"training step, batch {FULL.batch_size} x {FULL.train_len} tokens, one thread; testing at quick size:")
    cpu_per_step, testing = [], []
    for encoding in ENCODINGS:
        wall, cpu = step_times(encoding, args.steps)
        scored, probed, hops = testing_cpu_s(encoding)
        cpu_per_step.append(cpu)
        testing.append(scored + probed + hops)
        print(
            f"  {encoding:<11} step {wall:6.1f} ms wall {cpu:6.1f} ms CPU; testing {len(QUICK.arms_of(encoding))} "
            f"arm(s) {scored:4.1f} s CPU, passkey {probed:4.1f} s CPU, two-hop {hops:4.1f} s CPU"
        )
    mean_cpu = statistics.mean(cpu_per_step)
    full_steps = len(FULL.encodings) * len(FULL.seeds) * FULL.steps
    quick_steps = len(QUICK.encodings) * len(QUICK.seeds) * QUICK.steps
    print(
        f"predicted from CPU time: full run's training {full_steps} steps ~ {full_steps * mean_cpu / 1000:.0f} s "
        f"(target {FULL_TARGET_S:.0f} s for the whole run); quick {quick_steps} steps ~ "
        f"{quick_steps * mean_cpu / 1000:.0f} s of training + {sum(testing):.0f} s of testing"
    )
    if args.skip_quick:
        return 0
    for jobs in (1, 2):
        load = os.getloadavg()[0]
        wall, cpu = quick_mode(jobs)
        verdict = "meets" if wall < QUICK_TARGET_S else "misses"
        print(
            f"quick mode, --jobs {jobs}: {wall:.1f} s wall ({verdict} the {QUICK_TARGET_S:.0f} s target), "
            f"{cpu:.1f} s CPU; load average {load:.1f} when it started"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
