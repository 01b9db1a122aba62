"""What every command shares: exit codes, the usage error, atomic writes, progress and tables."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

EXIT_OK, EXIT_WEAK_SUITE, EXIT_USAGE, EXIT_FAULT = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C


class UsageError(Exception):
    """Bad usage found by a command itself; the command line prints it with the usage, exit 2."""


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and ``os.replace``: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, 0o644)  # mkstemp makes it private; results are meant to be read
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


class ProgressBar:
    """A plain progress bar on stderr: redrawn in place on a terminal, one line per step otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.done, self.stream, self.width = total, 0, stream or sys.stderr, width
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.tty = self.stream.isatty()

    def step(self, label: str) -> None:
        with self.lock:
            self.done += 1
            filled = self.width * self.done // max(self.total, 1)
            elapsed = time.monotonic() - self.started
            line = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {elapsed:5.1f}s  {label}"
            if self.tty:
                self.stream.write("\r" + line[:120].ljust(120) + ("\n" if self.done == self.total else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in [header, ["-" * width for width in widths], *rows]
    ]
    return "\n".join(lines)
