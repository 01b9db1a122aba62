"""The worker process: started with ``subprocess`` (never a fork of the judge), warm for many submissions.

The worker's code is ``grader/sandboxed/``: every ``.py`` file of that folder goes to it as source
over its stdin, a Unix socket, before anything else. ``BOOTSTRAP`` (the ``-c`` program) reads them
and serves them as the package ``sandbox_runner`` from a small import finder, so no list of
modules or order of loading is kept here, and nothing of the project is mounted where the
worker runs. The child removes that finder and those modules before any student code runs.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grader.sandboxed as sandboxed
from grader.faults import GraderFault
from grader.sandbox.isolation import BLOCKED_MODULES, bwrap_command, choose_isolation, worker_environment
from grader.sandboxed import protocol
from grader.sandboxed.protocol import MessageKind, StrayScope
from grader.settings import GraderSettings
from grader.vocabulary import Isolation
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISES

SANDBOXED_DIR = Path(sandboxed.__file__).resolve().parent
RUNNER_PACKAGE = "sandbox_runner"  # what grader/sandboxed/ is called inside the worker
BOOTSTRAP = """
import gc; gc.disable()  # until the worker's warm-up ends (worker.main): 0.15 s of CPU in collections
import importlib, importlib.util, json, socket, struct, sys
PACKAGE = RUNNER_PACKAGE_NAME
control = socket.socket(fileno=0)
def exactly(size):
    data = b""
    while len(data) < size:
        chunk = control.recv(size - len(data))
        if not chunk:
            raise SystemExit(3)
        data += chunk
    return data
sources = json.loads(exactly(struct.unpack("!I", exactly(4))[0]))
class ReceivedSources:
    package = PACKAGE
    def stem(self, fullname):
        if fullname == PACKAGE:
            return "__init__"
        parent, _, stem = fullname.rpartition(".")
        return stem if parent == PACKAGE and stem != "__init__" and stem in sources else None
    def find_spec(self, fullname, path=None, target=None):
        stem = self.stem(fullname)
        if stem is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin="<" + PACKAGE + "/" + stem + ".py>",
                                               is_package=stem == "__init__")
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        source = sources[self.stem(module.__name__)]
        exec(compile(source, module.__spec__.origin, "exec"), module.__dict__)
sys.meta_path.insert(0, ReceivedSources())
importlib.import_module(PACKAGE + ".worker").main(control)
""".replace("RUNNER_PACKAGE_NAME", repr(RUNNER_PACKAGE))


_worker_slots = itertools.count()
# Every worker is started from this one thread. A worker dies with its judge (PR_SET_PDEATHSIG, and
# bubblewrap's --die-with-parent), and Linux ties that to the thread that started it: started from
# a thread that ends (a grading thread, a server's request thread), it was killed with that thread.
# This thread lives as long as the process.
SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader-worker-spawner")


def runner_sources() -> dict[str, str]:
    """Every module of ``grader/sandboxed/`` by name: the worker's whole code, sent as source."""
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(SANDBOXED_DIR.glob("*.py"))}


class WorkerProcess:
    """One warm worker (torch imported once). Not thread-safe: one judging thread per worker."""

    def __init__(
        self,
        settings: GraderSettings,
        isolation: Isolation | None = None,
        preload: tuple[str, ...] = (),
        meta_kernels: bool = True,
    ) -> None:
        self.settings = settings
        self.isolation = isolation or choose_isolation(settings)
        self.limits = protocol.Limits(settings.max_header_bytes, settings.max_message_bytes)
        slot = next(_worker_slots) % 64
        self.first_uid = settings.uid_base + ((os.getpid() % 65536) * 64 + slot) * 256
        self.uid_counter = itertools.count()
        self.fallback_root: str | None = None
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.info: dict = {}
        self.owed: list[MessageKind] = []  # answers the worker owes, in order (release does not wait)
        self.next_child: socket.socket | None = None  # a child forked ahead by release()
        self._start(preload, meta_kernels)

    # -- life cycle

    def _start(self, preload: tuple[str, ...], meta_kernels: bool) -> None:
        judge_end, worker_end = socket.socketpair()
        # sys.executable, not its real path: a venv's python finds its site-packages via pyvenv.cfg
        program = [sys.executable, "-I", "-B", "-c", BOOTSTRAP]
        is_root = os.geteuid() == 0
        self.stderr = tempfile.TemporaryFile()
        if self.isolation == Isolation.BWRAP:
            command, env, cwd, tmp_root = bwrap_command(self.settings, program), None, None, "/tmp"
            scope, hidden = StrayScope.NAMESPACE, []
        else:
            self.fallback_root = tempfile.mkdtemp(prefix="poslab-grader-")
            os.chmod(self.fallback_root, 0o711)  # children may enter their own folder, not list others
            command, cwd, tmp_root = program, self.fallback_root, self.fallback_root
            env = worker_environment(self.fallback_root)
            scope, hidden = (StrayScope.UID if is_root else StrayScope.GROUP), [str(PROJECT_ROOT)]
            preload = ("torch.nn", "torch.nn.functional", "math", *preload)
        try:
            self.process = SPAWNER.submit(
                subprocess.Popen,
                command,
                stdin=worker_end,
                stdout=subprocess.DEVNULL,
                stderr=self.stderr,
                env=env,
                cwd=cwd,
                start_new_session=True,
            ).result()
        except OSError as error:
            raise GraderFault(f"could not start the grading worker: {error}") from None
        finally:
            worker_end.close()
        self.control = judge_end
        sources = json.dumps(runner_sources()).encode()
        try:
            judge_end.sendall(struct.pack("!I", len(sources)) + sources)
            protocol.send_frame(
                judge_end,
                {
                    "type": MessageKind.HELLO,
                    "tmp_root": tmp_root,
                    "stray_scope": scope,
                    "hidden_paths": hidden,
                    "blocked_modules": list(BLOCKED_MODULES),
                    "preload": list(preload),
                    "warm_meta_kernels": meta_kernels,
                    "drop_uid": is_root,
                },
            )
            self.info = self._expect(MessageKind.READY, time.monotonic() + self.settings.worker_start_seconds)
        except (OSError, protocol.ProtocolError, protocol.ReadTimeout) as error:
            tail = self._stderr_tail()
            self.close()
            raise GraderFault(f"the grading worker ({self.isolation}) did not start: {error}; {tail}") from None

    def _stderr_tail(self) -> str:
        try:
            self.stderr.seek(0)
            return self.stderr.read()[-2000:].decode(errors="replace")
        except (OSError, ValueError):
            return ""

    def _expect(self, kind: MessageKind, deadline: float | None) -> dict:
        header, _ = protocol.recv_frame(self.control, protocol.Limits(), deadline)
        if header["type"] != kind:
            raise protocol.ProtocolError(f"the worker answered {header['type']!r} where '{kind}' was expected")
        return header

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        self._drop_next_child()
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.process is not None:
            try:
                self.process.wait(timeout=5)  # it reaps its last child when the socket closes
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
            self.process = None
        if self.fallback_root is not None:
            shutil.rmtree(self.fallback_root, ignore_errors=True)
            self.fallback_root = None
        self.stderr.close()

    # -- children
    #
    # A grading's fixed cost is a child forked, confined and ready (about 10 ms), then killed and
    # reaped with all it started (about 6 ms). ``release`` does the second and the next grading's
    # first while nobody waits: the worker reaps the child, then forks the next one, in that order.

    def spawn(self) -> socket.socket:
        """A fresh child (the one forked ahead, if any); return the judge's end of its socket."""
        self._settle()
        ahead = self._take_next_child()
        if ahead is not None:
            return ahead
        judge_end = self._ask_spawn()
        self._settle()
        return judge_end

    def reap(self) -> str:
        """Kill the current child and all it started; return how it ended (for messages only)."""
        self._ask({"type": MessageKind.REAP}, MessageKind.REAPED)
        return protocol.clip(self._settle().get("ended", ""), 100)

    def release(self) -> None:
        """As ``reap``, and fork the next child ahead, without waiting for either answer: the grading
        that used the child has its result. A failure shows at the next ``spawn``."""
        self._ask({"type": MessageKind.REAP}, MessageKind.REAPED)
        self.next_child = self._ask_spawn()

    def _take_next_child(self) -> socket.socket | None:
        """The child forked ahead; None if there is none, or if it has died since (killed while it
        waited): that is not the next submission's doing."""
        ahead, self.next_child = self.next_child, None
        if ahead is None:
            return None
        poller = select.poll()
        poller.register(ahead, select.POLLRDHUP)
        if poller.poll(0):  # hung up (its READY may be waiting all the same)
            ahead.close()
            self.reap()
            return None
        return ahead

    def _ask_spawn(self) -> socket.socket:
        judge_end, child_end = socket.socketpair()
        uid = self.first_uid + next(self.uid_counter) % 256
        try:
            limits = self.settings.child_limits(len(EXERCISES))
            self._ask({"type": MessageKind.SPAWN, "uid": uid, "limits": limits}, MessageKind.SPAWNED)
            socket.send_fds(self.control, [b"s"], [child_end.fileno()])
        except (OSError, GraderFault) as error:
            judge_end.close()
            raise self._failed(error) from None
        finally:
            child_end.close()
        return judge_end

    def _ask(self, header: dict, answer: MessageKind) -> None:
        try:
            protocol.send_frame(self.control, header)
        except OSError as error:
            raise self._failed(error) from None
        self.owed.append(answer)

    def _settle(self) -> dict:
        """Read every answer the worker owes, in order; return the last ``reaped`` one."""
        reaped: dict = {}
        while self.owed:
            kind = self.owed.pop(0)
            try:
                answer = self._expect(kind, time.monotonic() + 30)
            except (OSError, protocol.ProtocolError, protocol.ReadTimeout) as error:
                raise self._failed(error) from None
            reaped = answer if kind == MessageKind.REAPED else reaped
        return reaped

    def _failed(self, error: BaseException) -> GraderFault:
        """The worker can no longer be trusted to be in step: nothing owed or forked ahead is used."""
        self.owed.clear()
        self._drop_next_child()
        if isinstance(error, GraderFault):
            return error
        return GraderFault(f"the grading worker failed: {error}; {self._stderr_tail()}")

    def _drop_next_child(self) -> None:
        if self.next_child is not None:
            self.next_child.close()
            self.next_child = None
