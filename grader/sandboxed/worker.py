"""The worker: one single-threaded process that imports torch once and forks a child per submission.

Why a separate process: ``import torch`` costs well over a second, so it must happen once, not
per submission; and a process that forks after torch has run a multi-threaded op can deadlock
in the child, so the process that forks sets ``torch.set_num_threads(1)`` before its first op
and runs nothing else. The judge (CLI or app) starts it with ``subprocess`` and never forks.

The worker runs inside bubblewrap when it can (``grader.sandbox.isolation`` builds the command
line), or as a plain subprocess in the fallback. It receives its own code, this folder's sources,
over its stdin, which is a Unix socket to the judge: nothing of the project is mounted where it
runs. ``main`` is its entry point.

Control messages (``protocol`` frames on that socket):

``hello``  judge -> worker once: where children get their folders, what to hide, what to warm up;
           answered ``ready``.
``spawn``  judge -> worker, followed by one byte carrying the child's socket: fork a child;
           answered ``spawned``.
``reap``   judge -> worker: SIGKILL the child, then every process left under any child uid
           this worker used (a grandchild that called ``setsid()`` included), delete the
           child's folder; answered ``reaped`` with how the child ended (for messages only).
"""

from __future__ import annotations

import ctypes
import gc
import os
import shutil
import signal
import socket
import sys
import time

import torch

from . import child, protocol
from .protocol import MessageKind, StrayScope
from .warm_up import spare_dynamo_import, warm_up

PR_SET_PDEATHSIG = 1
KILL_ROUNDS = 200


def main(control: socket.socket) -> None:
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the judge
    torch.set_num_threads(1)  # before any op: forking after a multi-threaded op can deadlock
    torch.set_num_interop_threads(1)
    hello, _ = protocol.recv_frame(control)
    if hello["type"] != MessageKind.HELLO:
        raise protocol.ProtocolError(
            f"the judge's first message was {protocol.clip(hello['type'], 40)!r}, not its hello"
        )
    for name in hello.get("preload", ()):
        __import__(name)  # in the fallback a child's uid may not be able to read site-packages
    meta_kernels = bool(hello.get("warm_meta_kernels", True))
    if meta_kernels:
        spare_dynamo_import()  # before the first meta op
    warm_up(meta_kernels)
    gc.freeze()  # keep the parent's objects out of the children's garbage collections
    gc.enable()  # the bootstrap turned collections off for the imports and the warm-up
    Worker(control, hello).serve()
    # The judge waits for this exit; the interpreter's own shutdown (torch's teardown, every object
    # collected) took seconds on a loaded machine and keeps nothing: the children are reaped.
    sys.stderr.flush()
    os._exit(0)


class Worker:
    def __init__(self, control: socket.socket, hello: dict) -> None:
        self.control = control
        self.tmp_root = hello["tmp_root"]
        self.stray_scope = StrayScope(hello["stray_scope"])
        self.spec_extra = {
            "tmp_root": self.tmp_root,
            "hidden_paths": hello.get("hidden_paths", []),
            "blocked_modules": hello.get("blocked_modules", []),
            "drop_uid": bool(hello.get("drop_uid")),
            "warm_meta_kernels": bool(hello.get("warm_meta_kernels", True)),
        }
        self.used_uids: set[int] = set()
        self.child_pid: int | None = None
        self.child_uid: int | None = None

    def send(self, header: dict) -> None:
        protocol.send_frame(self.control, header)

    def serve(self) -> None:
        self.send({"type": MessageKind.READY, "pid": os.getpid(), "uid": os.getuid(), "torch": torch.__version__})
        while True:
            try:
                header, _ = protocol.recv_frame(self.control)
            except protocol.PeerClosed:
                break
            if header["type"] == MessageKind.SPAWN:
                self.spawn(header)
            elif header["type"] == MessageKind.REAP:
                self.send({"type": MessageKind.REAPED, **self.reap()})
            else:
                break
        self.reap()

    def spawn(self, header: dict) -> None:
        _, fds, _, _ = socket.recv_fds(self.control, 1, 1)
        if len(fds) != 1:
            raise RuntimeError("a spawn message came without the child's socket")
        if self.child_pid is not None:
            self.reap()
        sock = socket.socket(fileno=fds[0])
        uid = int(header["uid"])
        spec = {"uid": uid, "limits": header["limits"], **self.spec_extra}
        self.used_uids.add(uid)
        pid = os.fork()
        if pid == 0:
            child.run(sock, spec)  # never returns
        sock.close()
        self.child_pid, self.child_uid = pid, uid
        self.send({"type": MessageKind.SPAWNED, "pid": pid})

    def reap(self) -> dict:
        """End the current child and everything it started; say how it ended."""
        ended = "no child was running"
        if self.child_pid is not None:
            for kill in (os.killpg, os.kill):  # the child leads its own process group
                try:
                    kill(self.child_pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _, status = os.waitpid(self.child_pid, 0)
            ended = describe_status(status)
        strays = kill_strays(self.stray_scope, self.used_uids)
        if self.child_uid is not None:
            shutil.rmtree(os.path.join(self.tmp_root, f"run-{self.child_uid}"), ignore_errors=True)
        self.child_pid = self.child_uid = None
        return {"ended": ended, "strays": strays}


def describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        try:
            return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
        except ValueError:
            return f"killed by signal {os.WTERMSIG(status)}"
    return f"exited with code {os.WEXITSTATUS(status)}"


def kill_strays(scope: StrayScope, uids: set[int]) -> int:
    """SIGKILL what a child left behind, until nothing is left; return how many were killed.

    A process that called ``setsid()`` has left the child's process group, so a group kill misses
    it. ``NAMESPACE`` (bwrap): every process of the worker's PID namespace but its init and the
    worker. ``UID`` (fallback as root): every process whose real uid a child had; no other
    process on the machine has those uids. ``GROUP``: nothing more can be found.
    """
    if scope == StrayScope.GROUP:
        return 0
    owners = {StrayScope.NAMESPACE: None, StrayScope.UID: uids}[scope]  # None: every process here
    killed = 0
    for _ in range(KILL_ROUNDS):
        found = live_pids(owners)
        if not found:
            return killed
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.001)
    return killed


def live_pids(uids: set[int] | None) -> list[int]:
    """Live processes with one of ``uids`` as real uid; with None, all but pid 1 and this one."""
    if uids is not None and not uids:
        return []
    own = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (own, 1):
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                status = handle.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        state = fields.get("State", "").strip()[:1]
        real_uid = int(fields.get("Uid", "-1").split()[0])
        if (uids is None or real_uid in uids) and state not in ("Z", "X"):
            found.append(int(entry))
    return found
