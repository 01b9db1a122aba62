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

import contextlib
import ctypes
import gc
import math
import os
import shutil
import signal
import socket
import sys
import time
import types

import torch

from . import child, protocol, tensor_codec
from .protocol import MessageKind, StrayScope

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
    warm_up(meta_kernels=hello.get("warm_meta_kernels", True))
    gc.freeze()  # keep the parent's objects out of the children's garbage collections
    Worker(control, hello).serve()
    # The judge waits for this exit; the interpreter's own shutdown (torch's teardown, every object
    # collected) took seconds on a loaded machine and keeps nothing: the children are reaped.
    sys.stderr.flush()
    os._exit(0)


def warm_up(meta_kernels: bool) -> None:
    """Run each kind of op the exercises use once, so that children inherit initialised kernels.

    ``meta_kernels``: the meta device's too, for the hidden tests (its first op imports sympy, half a
    second), which the public tests never use.
    """
    q = torch.randn(2, 3, 5, 8)
    weights = torch.softmax(q @ q.transpose(-2, -1) / math.sqrt(8) + torch.zeros(3, 5, 5), dim=-1)
    (weights @ q).masked_fill(torch.ones(5, 8, dtype=torch.bool).triu(), float("-inf")).sum()
    angles = torch.outer(torch.arange(4, dtype=torch.float64), torch.arange(0, 8, 2) / 8.0)
    torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).float().to(torch.bfloat16)
    torch.cat([q[..., 0::2], q[..., 1::2]], dim=-1).contiguous().to(torch.float16)
    module = torch.nn.Linear(4, 4)
    module.weight.data.copy_(torch.eye(4))
    torch.nn.Embedding(4, 4)(torch.arange(3))
    torch.view_as_real(torch.polar(torch.ones(3), torch.zeros(3)))
    tensor_codec.build_tensor(torch.float32, (2,), tensor_codec.tensor_bytes(torch.ones(2)))
    if meta_kernels:  # seconds in a child, so here, once
        spare_dynamo_import()
        module.to(torch.float64).to("meta")(torch.empty(2, 4, dtype=torch.float64, device="meta"))
        meta = torch.empty(2, 5, 8, device="meta")
        torch.softmax(meta @ meta.transpose(-2, -1) + torch.empty(5, 5, device="meta"), dim=-1) @ meta
        (meta[..., 0::2] * meta[..., 1::2].cos() - meta[..., 0::2].sin()).to(torch.float64)


def spare_dynamo_import() -> int:
    """Let every ``torch._disable_dynamo`` wrapper that exists now call its function directly.

    At its first call such a wrapper imports ``torch._dynamo`` (800 modules, a second of CPU in every
    worker) only to wrap the function in ``torch._dynamo.disable``, which changes nothing outside
    ``torch.compile``, and caches that on the function as ``__dynamo_disable``. The meta device's
    Python kernels go through hundreds of them: the cache is set to the function itself. A
    submission that compiles, or steps an optimizer, still imports dynamo in its own child (torch
    2.13's ``torch._compile``; a test checks that the meta device's ops import no dynamo).
    Returns how many it set."""
    from torch._compile import _disable_dynamo

    wrapper_code = _disable_dynamo(lambda: None).__code__
    if "fn" not in wrapper_code.co_freevars:  # another torch: its warm-up imports dynamo, as it did before
        return 0
    cell = wrapper_code.co_freevars.index("fn")
    found = 0
    for candidate in gc.get_objects():
        if type(candidate) is types.FunctionType and candidate.__code__ is wrapper_code:
            function = candidate.__closure__[cell].cell_contents
            with contextlib.suppress(AttributeError, TypeError):  # a builtin takes no attribute: it keeps the import
                setattr(function, "__dynamo_disable", function)
                found += 1
    return found


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
