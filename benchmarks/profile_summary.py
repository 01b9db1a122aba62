"""Record the app's Streamlit process with py-spy while a benchmark runs, and print the top entries.

    python benchmarks/profile_summary.py profile.txt        # a py-spy --format raw file

``bench_sessions.py --profile profile.txt`` records with ``py-spy record --gil --nolineno
--format raw`` during the sessions-at-once phase: only samples of the thread holding
the interpreter lock, the one that serves every session's page in turn. py-spy's proportions
stay meaningful on a busy machine; its absolute times do not. The summary gives, for each
function, the share of samples it was on the stack (inclusive) and at the top (self).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path


def start_recording(pid: int, output: Path, rate: int = 50) -> subprocess.Popen:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    return subprocess.Popen(
        [
            spy,
            "record",
            "--pid",
            str(pid),
            "--rate",
            str(rate),
            "--gil",
            "--nolineno",
            "--format",
            "raw",
            "--output",
            str(output),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def stop_recording(recorder: subprocess.Popen) -> None:
    recorder.send_signal(2)  # SIGINT: py-spy writes its file and exits
    try:
        recorder.wait(timeout=30)
    except subprocess.TimeoutExpired:
        recorder.kill()


def frames(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rpartition(" ")
    return [frame.strip() for frame in stack.split(";") if frame.strip()], int(count)


def summary(path: Path, top: int = 25) -> str:
    if not path.exists():
        return f"{path}: py-spy wrote no profile (is py-spy installed, and may it trace the process?)"
    inclusive, own, total = Counter(), Counter(), 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = frames(line)
        total += count
        for frame in set(stack):
            inclusive[frame] += count
        if stack:
            own[stack[-1]] += count
    if not total:
        return f"{path}: no samples"
    lines = [f"{path}: {total} samples holding the GIL", f"  {'inclusive':>9} {'self':>6}  function (file)"]
    for frame, count in inclusive.most_common(top):
        lines.append(f"  {100 * count / total:8.1f}% {100 * own[frame] / total:5.1f}%  {frame[:140]}")
    lines.append("  top by self time:")
    for frame, count in own.most_common(12):
        lines.append(f"  {'':9} {100 * count / total:5.1f}%  {frame[:140]}")
    return "\n".join(lines)


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(summary(Path(argument)))
