"""Run Dask's own scheduler or worker command, and stop it when the process that started it ends.

    python -m grader.service.launch scheduler|worker [dask's arguments]

The embedded cluster (``grader.service.embedded``) starts its processes through this with a pipe
on stdin: when the app or the CLI ends in any way (even SIGKILL), the pipe closes and the
process exits, so no scheduler or judge outlives the program that started it.
"""

from __future__ import annotations

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
    exit_when_stdin_closes()
    if role == "scheduler":
        from distributed.cli.dask_scheduler import main as dask_main
    elif role == "worker":
        from distributed.cli.dask_worker import main as dask_main
    else:
        raise SystemExit(f"usage: python -m grader.service.launch scheduler|worker ...; got {role!r}")
    dask_main(args=arguments, prog_name=f"dask {role}")


if __name__ == "__main__":
    main(sys.argv[1:])
