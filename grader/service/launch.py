"""Run Dask's own scheduler or worker command, and stop it when the process that started it ends.

    python -m grader.service.launch scheduler|worker [--cpu N] [dask's arguments]

The embedded cluster (``grader.service.embedded``) starts its processes through this with a pipe
on stdin: when the app or the CLI ends in any way (even SIGKILL), the pipe closes and the
process exits, so no scheduler or judge outlives the program that started it. ``--cpu N`` keeps
the process, and every process it starts (a judge's sandbox worker and its children), on core N.
"""

from __future__ import annotations

import logging
import os
import sys
import threading


def exit_when_stdin_closes() -> None:
    def watch() -> None:
        while sys.stdin.buffer.read(1024):
            pass
        os._exit(0)  # the parent is gone; the judge's sandbox worker dies with us (--die-with-parent)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> None:
    role, arguments = argv[0], argv[1:]
    if arguments[:1] == ["--cpu"]:
        os.sched_setaffinity(0, {int(arguments[1])})  # before any thread: each one inherits it
        arguments = arguments[2:]
    exit_when_stdin_closes()
    if role == "scheduler":
        from distributed.cli.dask_scheduler import main as dask_main
    elif role == "worker":
        from distributed.cli.dask_worker import main as dask_main
    else:
        raise SystemExit(f"usage: python -m grader.service.launch scheduler|worker [--cpu N] ...; got {role!r}")
    try:
        dask_main(args=arguments, prog_name=f"dask {role}")
        code = 0
    except SystemExit as stop:  # click ends its commands with sys.exit
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    # The watcher thread is still blocked reading stdin, and at interpreter shutdown that read's lock
    # made Python abort (SIGABRT and a core dump: over a second per process, at every stop). Dask
    # has stopped; only the logs are left to flush.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
