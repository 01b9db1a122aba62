"""Where the suite's time and CPU go, module by module.

    python benchmarks/suite_profile.py [--out profile.json] [pytest args...]

Runs pytest in one process (``-n 0``) on a quiet machine and records, for each test module, its wall
time and the CPU the whole machine spent meanwhile (``/proc/stat``: the module's own processes,
its apps, judges, clusters and Chromium alike; with one process at a time nothing else is counted).
Prints the modules by CPU, and the totals that set the suite's floor on two cores: CPU / 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pytest

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """CPU seconds the machine has spent on anything but idling and waiting for disks."""
    fields = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields[:8]) - idle - iowait) / CLOCK_TICKS


class ModuleMeter:
    """A pytest plugin: wall and machine CPU from a module's first test to the next module's."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.rows: dict[str, dict[str, float]] = {}
        self.current: str | None = None
        self.started = (0.0, 0.0)

    def close_current(self) -> None:
        if self.current is not None:
            wall, cpu = time.monotonic() - self.started[0], busy_seconds() - self.started[1]
            row = self.rows.setdefault(self.current, {"wall": 0.0, "cpu": 0.0})
            row["wall"] += wall
            row["cpu"] += cpu

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        module = item.nodeid.split("::", 1)[0]
        if module != self.current:
            self.close_current()
            self.current = module
            self.started = (time.monotonic(), busy_seconds())

    def pytest_sessionfinish(self, session):
        self.close_current()  # the last module's teardown is counted with it
        self.out.write_text(json.dumps(self.rows, indent=1))


def summary(rows: dict[str, dict[str, float]], top: int) -> str:
    total_cpu = sum(row["cpu"] for row in rows.values())
    total_wall = sum(row["wall"] for row in rows.values())
    lines = [f"{'cpu s':>8} {'wall s':>8} {'busy':>5}  module"]
    for module, row in sorted(rows.items(), key=lambda item: -item[1]["cpu"])[:top]:
        lines.append(f"{row['cpu']:8.1f} {row['wall']:8.1f} {row['cpu'] / max(row['wall'], 1e-9):5.2f}  {module}")
    lines.append(f"{total_cpu:8.1f} {total_wall:8.1f}        all {len(rows)} modules (cores: {os.cpu_count()})")
    lines.append(f"floor on two cores, if the CPU were spread perfectly: {total_cpu / 2:.0f} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("suite-profile.json"))
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--summary-only", action="store_true", help="print the summary of --out and stop")
    args, pytest_args = parser.parse_known_args()
    if not args.summary_only:
        code = pytest.main(["-n", "0", "-p", "no:cacheprovider", "-q", *pytest_args], plugins=[ModuleMeter(args.out)])
        if code not in (0, 1):
            sys.exit(code)
    print(summary(json.loads(args.out.read_text()), args.top))


if __name__ == "__main__":
    main()
