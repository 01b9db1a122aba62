"""torch's intra-op thread count: the one place in the library that changes it.

torch's thread count is one setting for the whole process: the app's sessions (one script thread
each) and the judge's grading threads (``--jobs N``) would otherwise restore each other's value.
Tiny tensors run faster on one thread on a busy machine: a second thread waiting for its share
made the learned-table fit's 300 steps take 2.3 s instead of 0.4 s, and a timed reference call
25 times slower (both measured on 2 cores).

Two ways in, for two kinds of process:

* ``one_intra_op_thread()``: a short block of work in a process that others share (the app, a
  judge). It holds a lock while the count is changed, so keep the block short: every other
  thread that asks waits for it. A long run (the extrapolation lab's training) belongs in a
  process of its own instead (``poslab.experiments.lab_runner``).
* ``one_thread_for_this_process()``: once, at the start of a process that runs one job of its own
  (the extrapolation command line, its pool's workers); nothing restores it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_SETTING = threading.RLock()  # held while the count is changed: one block at a time sets it


@contextmanager
def one_intra_op_thread() -> Iterator[None]:
    with _SETTING:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)


def one_thread_for_this_process() -> None:
    """One intra-op thread from now on, in a process whose only work is its own: a seed then gives
    the same numbers in any process, and parallel runs do not oversubscribe the cores."""
    with _SETTING:
        torch.set_num_threads(1)
