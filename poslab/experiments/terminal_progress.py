"""A text progress bar on a stream (stderr), so that long runs show they are alive without a new dependency."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    """``update(fraction, message)`` redraws ``[#####.....]  50%  message  eta 1m20s``.

    On a terminal the line is redrawn in place at most every 0.2 s; into a file (a nohup log) a new
    line is written at most every 10 s, so that the log stays short.
    """

    WIDTH = 30

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.interactive = stream.isatty()
        self.interval = 0.2 if self.interactive else 10.0
        self.started = time.perf_counter()
        self.last_drawn = float("-inf")
        self.last_line = ""
        self.drawn_line = ""

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.last_line != self.drawn_line:
            self._draw(self.last_line, force=True)
        if self.interactive and self.drawn_line:
            self.stream.write("\n")
            self.stream.flush()

    def update(self, fraction: float, message: str) -> None:
        fraction = min(max(fraction, 0.0), 1.0)
        filled = round(self.WIDTH * fraction)
        self.last_line = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {100 * fraction:3.0f}%  {message}  {self._eta(fraction)}"
        )
        self._draw(self.last_line, force=fraction >= 1.0)

    def _eta(self, fraction: float) -> str:
        elapsed = time.perf_counter() - self.started
        if fraction <= 0.0:
            return ""
        minutes, seconds = divmod(int(elapsed * (1.0 - fraction) / fraction), 60)
        return f"eta {minutes}m{seconds:02d}s"

    def _draw(self, line: str, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last_drawn < self.interval:
            return
        self.last_drawn, self.drawn_line = now, line
        self.stream.write(f"\r{line:<100}" if self.interactive else line + "\n")
        self.stream.flush()
