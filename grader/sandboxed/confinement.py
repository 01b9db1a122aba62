"""What a freshly forked child does to itself before any of a submission's code runs.

In order: a new session; no file descriptors but its own socket (as fd 3); stdout and stderr to
``/dev/null``; rlimits (``set_limits``); as root, a uid of its own (``setgroups([])``, ``setgid``,
``setuid``, which also empties its capabilities); ``PR_SET_NO_NEW_PRIVS`` and SIGKILL when its
parent dies; an empty environment and a private working folder; the project's packages refused
by name (``BlockedImports``; the real guard is that they are not mounted).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import socket
import sys
import tempfile
import types

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
SOCKET_FD = 3
SUBMISSION_PACKAGE = "exercises"  # the submission's files are importable as exercises.<stem> and as <stem>
RUNNER_PACKAGE = __name__.rpartition(".")[0]  # the runner: this folder's package, however it was loaded


def confine(sock: socket.socket, spec: dict) -> str:
    """Cut the child off from the worker and drop its privileges; return its working folder."""
    os.setsid()  # its own session and process group, away from the worker's
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(number, signal.SIG_DFL)
    received = sock.detach()  # the Python object must not close a number reused later
    if received != SOCKET_FD:
        os.dup2(received, SOCKET_FD)
        os.close(received)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # its prints go nowhere: stdout counts for nothing
        os.dup2(devnull, fd)
    os.closerange(SOCKET_FD + 1, 1 << 16)  # the worker's control socket among them
    uid = int(spec["uid"])
    workdir = os.path.join(spec["tmp_root"], f"run-{uid}")
    os.mkdir(workdir, 0o700)
    is_root = bool(spec.get("drop_uid")) and os.geteuid() == 0
    if is_root:
        os.chown(workdir, uid, uid)
    set_limits(spec["limits"])
    if is_root:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # also empties the capability sets
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # set after setuid, which clears it
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update({"HOME": workdir, "TMPDIR": workdir, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    tempfile.tempdir = workdir  # the worker may have cached /tmp, where this uid cannot write
    hidden = tuple(spec.get("hidden_paths", ()))
    sys.path[:] = [workdir, os.path.join(workdir, SUBMISSION_PACKAGE)] + [
        entry for entry in sys.path if entry and not entry.startswith(hidden or ("\0",))
    ]
    forget_runner()
    sys.meta_path.insert(0, BlockedImports(spec.get("blocked_modules", ())))
    return workdir


def forget_runner() -> None:
    """Take the runner's own modules, and the finder that served them, out of the import system.

    Its modules are found as the package's attributes (an import sets one per submodule), not by a
    scan of ``sys.modules``: touching its two thousand names cost a child 3.5 ms of copied pages."""
    package = sys.modules.pop(RUNNER_PACKAGE, None)
    for value in vars(package).values() if package is not None else ():
        if isinstance(value, types.ModuleType) and value.__name__.startswith(RUNNER_PACKAGE + "."):
            sys.modules.pop(value.__name__, None)
    sys.meta_path[:] = [finder for finder in sys.meta_path if getattr(finder, "package", None) != RUNNER_PACKAGE]


def set_limits(limits: dict) -> None:
    cpu = int(limits["cpu_seconds"])
    pairs = {
        resource.RLIMIT_AS: int(limits["memory_bytes"]),
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        resource.RLIMIT_NPROC: int(limits["processes"]),
        resource.RLIMIT_FSIZE: int(limits["file_bytes"]),
        resource.RLIMIT_NOFILE: int(limits["open_files"]),
        resource.RLIMIT_CORE: 0,
    }
    for kind, value in pairs.items():
        soft, hard = value if isinstance(value, tuple) else (value, value)
        resource.setrlimit(kind, (soft, hard))


class BlockedImports:
    """Refuses the project's own packages by name (the real guard is that they are not mounted)."""

    def __init__(self, names) -> None:
        self.names = tuple(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None
