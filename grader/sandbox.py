"""The judge's side of the sandbox: start a worker, open one child per exercise, talk to it.

What is guarded, and by what (see also grader/README.md):

* Student code never runs in the judging process. It runs in a child forked by a worker
  process; replies come back as JSON headers plus raw tensor bytes, checked here field by field
  (``_decode_*``) before any tensor is built. Nothing is unpickled; exit codes, stdout and files
  of the child count for nothing.
* With bubblewrap (``isolation == "bwrap"``) the worker runs with no network, a read-only view
  of /usr and of the Python installation only (not the project), a private /tmp, its own PID
  namespace, and dies with the judge. Each child runs as a uid of its own with rlimits on
  memory, CPU time, processes, file size and open files; after each exercise the worker kills
  every process left in its namespace (a grandchild that called ``setsid()`` included).
* The fallback (``isolation == "fallback"``) is a plain subprocess with a scrubbed environment
  and an empty working folder; children get the same rlimits and (as root) their own uid, and
  are killed by uid. It does not hide the file system: a child can read whatever its uid may.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

from grader import child as child_module
from grader import protocol, worker as worker_module
from grader.settings import GraderSettings
from poslab.exercises import EXERCISES
from grader.suite.student import (
    CallResult,
    NotImplementedBySubmission,
    OPS,
    Student,
    StudentError,
    SubmissionCrashed,
    TensorInfo,
    Transposed,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BLOCKED_MODULES = ("poslab", "grader")
BOOTSTRAP = """
import json, socket, struct, sys, types
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
package = types.ModuleType("sandbox_runner")
package.__path__ = []
sys.modules["sandbox_runner"] = package
for name in ("protocol", "child", "worker"):
    module = types.ModuleType("sandbox_runner." + name)
    module.__package__ = "sandbox_runner"
    module.__file__ = "<sandbox_runner/" + name + ".py>"
    sys.modules[module.__name__] = module
    exec(compile(sources[name], module.__file__, "exec"), module.__dict__)
sys.modules["sandbox_runner.worker"].main(control)
"""


class GraderFault(Exception):
    """The grader itself could not work (no worker, a broken worker): not the submission's fault."""


# ---------------------------------------------------------------- isolation


def python_binds() -> list[str]:
    """The folders the worker needs for Python and torch, never the project itself."""
    candidates = {sys.base_prefix, sys.prefix, sys.exec_prefix,
                  os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
                  os.path.dirname(os.path.dirname(torch.__file__))}
    paths = sorted({os.path.realpath(path) for path in candidates} | set(candidates))
    paths = [path for path in paths if os.path.isdir(path)]
    # Keep the outermost folders only; refuse one that holds the project (it would expose it).
    outer = [path for path in paths if not any(path != other and path.startswith(other + os.sep) for other in paths)]
    return [path for path in outer if not str(PROJECT_ROOT).startswith(path + os.sep)]


def masked_paths(binds: list[str]) -> list[str]:
    """Installed copies of the project's packages inside the bound folders: hidden by an empty tmpfs."""
    masks = []
    for name in BLOCKED_MODULES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            real = os.path.realpath(location)
            if any(real.startswith(bind + os.sep) for bind in binds):
                masks.append(real)
    return masks


def bwrap_command(settings: GraderSettings, program: list[str]) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise FileNotFoundError("bwrap is not installed")
    command = [bwrap, "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        command += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    # /tmp before the Python binds: a venv may live in a project checked out under /tmp.
    command += ["--proc", "/proc", "--dev", "/dev", "--size", str(settings.tmp_bytes), "--tmpfs", "/tmp"]
    binds = python_binds()
    made: set[str] = {"/tmp"}
    for path in binds:
        # bwrap would copy the host's modes for the folders above (/root is 0700): make them 0755
        # so that the child's uid can reach the Python installation.
        for parent in reversed(Path(path).parents[:-1]):
            if str(parent) not in made:
                command += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        command += ["--ro-bind", path, path]
    for path in masked_paths(binds):
        command += ["--tmpfs", path]
    command += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox", "--die-with-parent", "--new-session", "--chdir", "/tmp",
                "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
                "--setenv", "LANG", "C.UTF-8", "--setenv", "OMP_NUM_THREADS", "1",
                "--setenv", "MKL_NUM_THREADS", "1"]
    if os.geteuid() == 0:
        # Root keeps only what the worker needs to start children under other uids and clean up.
        command += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"):
            command += ["--cap-add", cap]
    else:
        command += ["--unshare-user"]
    return command + ["--"] + program


_BWRAP_VERDICT: dict[str, str | None] = {}
_BWRAP_LOCK = threading.Lock()


def bwrap_problem(settings: GraderSettings) -> str | None:
    """None if bubblewrap can start a sandbox here, else why not (checked once per process)."""
    with _BWRAP_LOCK:
        if "verdict" not in _BWRAP_VERDICT:
            try:
                # Cheap: Python starts, and torch (imported by the worker later) is where it should be.
                check = f"import os, sys; sys.exit(not os.path.isfile({torch.__file__!r}))"
                probe = subprocess.run(bwrap_command(settings, [sys.executable, "-I", "-c", check]),
                                       capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
                _BWRAP_VERDICT["verdict"] = None if probe.returncode == 0 else (
                    f"bwrap failed: {probe.stderr.decode(errors='replace').strip()[:300]}")
            except (OSError, subprocess.SubprocessError) as error:
                _BWRAP_VERDICT["verdict"] = f"bwrap is unusable: {error}"
        return _BWRAP_VERDICT["verdict"]


def choose_isolation(settings: GraderSettings) -> str:
    if settings.isolation != "auto":
        return settings.isolation
    return "bwrap" if bwrap_problem(settings) is None else "fallback"


# ---------------------------------------------------------------- the worker process

_worker_slots = itertools.count()


def runner_sources() -> dict[str, str]:
    return {"protocol": inspect.getsource(protocol), "child": inspect.getsource(child_module),
            "worker": inspect.getsource(worker_module)}


class WorkerProcess:
    """One warm worker (torch imported once). Not thread-safe: one judging thread per worker."""

    def __init__(self, settings: GraderSettings, isolation: str | None = None, preload: tuple[str, ...] = ()) -> None:
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
        self._start(preload)

    # -- life cycle

    def _start(self, preload: tuple[str, ...]) -> None:
        judge_end, worker_end = socket.socketpair()
        # sys.executable, not its real path: a venv's python finds its site-packages via pyvenv.cfg
        program = [sys.executable, "-I", "-B", "-c", BOOTSTRAP]
        is_root = os.geteuid() == 0
        self.stderr = tempfile.TemporaryFile()
        if self.isolation == "bwrap":
            command, env, cwd, tmp_root = bwrap_command(self.settings, program), None, None, "/tmp"
            scope, hidden = "namespace", []
        else:
            self.fallback_root = tempfile.mkdtemp(prefix="poslab-grader-")
            os.chmod(self.fallback_root, 0o711)  # children may enter their own folder, not list others
            command, cwd, tmp_root = program, self.fallback_root, self.fallback_root
            env = {"PATH": "/usr/bin:/bin", "HOME": self.fallback_root, "LANG": "C.UTF-8",
                   "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            scope, hidden = ("uid" if is_root else "group"), [str(PROJECT_ROOT)]
            preload = ("torch.nn", "torch.nn.functional", "math", *preload)
        try:
            self.process = subprocess.Popen(command, stdin=worker_end, stdout=subprocess.DEVNULL,
                                            stderr=self.stderr, env=env, cwd=cwd, start_new_session=True)
        except OSError as error:
            raise GraderFault(f"could not start the grading worker: {error}") from None
        finally:
            worker_end.close()
        self.control = judge_end
        sources = json.dumps(runner_sources()).encode()
        try:
            judge_end.sendall(struct.pack("!I", len(sources)) + sources)
            protocol.send_frame(judge_end, {"type": "hello", "tmp_root": tmp_root, "stray_scope": scope,
                                            "hidden_paths": hidden, "blocked_modules": list(BLOCKED_MODULES),
                                            "preload": list(preload), "drop_uid": is_root})
            self.info = self._expect("ready", time.monotonic() + self.settings.worker_start_seconds)
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

    def _expect(self, kind: str, deadline: float | None) -> dict:
        header, _ = protocol.recv_frame(self.control, protocol.Limits(), deadline)
        if header["type"] != kind:
            raise protocol.ProtocolError(f"the worker answered {header['type']!r} where {kind!r} was expected")
        return header

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
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

    def spawn(self) -> socket.socket:
        """Fork a fresh child; return the judge's end of its socket."""
        judge_end, child_end = socket.socketpair()
        uid = self.first_uid + next(self.uid_counter) % 256
        try:
            protocol.send_frame(self.control, {"type": "spawn", "uid": uid, "limits": self.settings.child_limits(len(EXERCISES))})
            socket.send_fds(self.control, [b"s"], [child_end.fileno()])
            self._expect("spawned", time.monotonic() + 30)
        except (OSError, protocol.ProtocolError, protocol.ReadTimeout) as error:
            judge_end.close()
            raise GraderFault(f"the grading worker failed: {error}; {self._stderr_tail()}") from None
        finally:
            child_end.close()
        return judge_end

    def reap(self) -> str:
        """Kill the current child and all it started; return how it ended (for messages only)."""
        try:
            protocol.send_frame(self.control, {"type": "reap"})
            answer = self._expect("reaped", time.monotonic() + 30)
        except (OSError, protocol.ProtocolError, protocol.ReadTimeout) as error:
            raise GraderFault(f"the grading worker failed: {error}; {self._stderr_tail()}") from None
        return protocol.clip(answer.get("ended", ""), 100)


# ---------------------------------------------------------------- one child


class ChildSession:
    """The judge's end of one child: a time budget, and the first crash kept for good.

    ``timeout`` seconds of waiting for the child are allowed in all; past it, or when the child
    dies or breaks the protocol, the child is killed and ``SubmissionCrashed`` is raised, now and
    on every later use.
    """

    def __init__(self, worker: WorkerProcess, timeout: float) -> None:
        self.worker = worker
        self.timeout = timeout
        self.budget = timeout
        self.crash: SubmissionCrashed | None = None
        self.fault: GraderFault | None = None  # the worker failed: not the submission's doing
        self.sock: socket.socket | None = worker.spawn()

    def receive(self, what: str) -> tuple[dict, bytearray]:
        if self.crash is not None:
            raise self.crash
        started = time.monotonic()
        try:
            return protocol.recv_frame(self.sock, self.worker.limits, started + self.budget)
        except protocol.ReadTimeout:
            self.fail(f"ran past the {self.timeout:g} s time limit for this exercise ({what})")
        except protocol.PeerClosed:
            ended = self.close()
            self.fail(f"the process running your code ended during {what} ({explain_end(ended)})")
        except protocol.ProtocolError as error:
            self.fail(f"your code broke the grader's protocol during {what}: {error}")
        finally:
            self.budget -= time.monotonic() - started

    def send(self, header: dict, blob: bytes = b"", what: str = "a call") -> None:
        if self.crash is not None:
            raise self.crash
        try:
            protocol.send_frame(self.sock, header, blob)
        except OSError:
            ended = self.close()
            self.fail(f"the process running your code ended before {what} ({explain_end(ended)})")

    def fail(self, reason: str) -> None:
        self.crash = SubmissionCrashed(reason)
        self.close()
        raise self.crash

    def close(self) -> str:
        """Kill the child and all it started; return how it ended. Safe to call twice."""
        if self.sock is None:
            return ""
        self.sock.close()
        self.sock = None
        try:
            return self.worker.reap()
        except GraderFault as fault:  # kept for the caller: run_case would turn it into a failed test
            self.fault = fault
            return ""


@dataclass
class LoadReport:
    """What importing the submission for one exercise came to."""

    import_errors: dict[str, dict]  # file -> the child's description of the error (checked)
    stuck_in: str | None  # the file being imported when the child died or ran out of time
    missing: list[str]


class SubmissionSandbox:
    """One submission in the sandbox: a child that serves its exercises one after another.

    ``for_exercise()`` gives the exercise's ``SandboxStudent`` after importing what it needs; the
    time limit restarts for each exercise. A child that crashed or ran out of time is killed
    with everything it started, and the next exercise gets a fresh one (files that hung or
    crashed the import are then left out by the caller's ``order``).
    """

    def __init__(self, worker: WorkerProcess, files: Mapping[str, str], timeout: float) -> None:
        self.worker = worker
        self.files = dict(files)
        self.timeout = timeout
        self.session: ChildSession | None = None
        self.fault: GraderFault | None = None

    def for_exercise(self, order: list[str], names: list[str]) -> "SandboxStudent":
        fresh = self.session is None or self.session.crash is not None
        if fresh:
            self.close()
            self.session = ChildSession(self.worker, self.timeout)
        self.session.budget = self.timeout
        return SandboxStudent(self.session, order, names, send_files=self.files if fresh else None)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.fault = self.fault or self.session.fault
            self.session = None


class SandboxStudent(Student):
    """A submission as the hidden tests see it, for one exercise; every call runs in the child.

    Construction imports what the exercise needs (``load`` says how that went). The first crash
    is kept: this and every later call for the exercise raise it again.
    """

    def __init__(self, session: ChildSession, order: list[str], names: list[str],
                 send_files: Mapping[str, str] | None) -> None:
        self.session = session
        self.names = list(names)
        self.found: set[str] = set()
        self.load = self._load(order, send_files)

    @property
    def crash(self) -> SubmissionCrashed | None:
        return self.session.crash

    def _load(self, order: list[str], send_files: Mapping[str, str] | None) -> LoadReport:
        report = LoadReport({}, None, list(self.names))
        try:
            header = {"type": "load", "order": order, "names": self.names}
            if send_files is not None:
                ready, _ = self.session.receive("start-up")
                if ready["type"] != "ready":
                    self.session.fail("the sandbox did not start properly")
                header["files"] = dict(send_files)
            self.session.send(header, what="the import")
            while True:
                header, _ = self.session.receive(f"the import of {report.stuck_in}" if report.stuck_in else "the import")
                kind = header["type"]
                if kind == "importing" and header.get("file") in order:
                    report.stuck_in = header["file"]
                elif kind == "imported" and header.get("file") == report.stuck_in:
                    if header.get("error") is not None:
                        report.import_errors[report.stuck_in] = check_import_error(header["error"])
                    report.stuck_in = None
                elif kind == "loaded" and isinstance(header.get("found"), list):
                    self.found = {name for name in self.names if name in header["found"]}
                    report.missing = [name for name in self.names if name not in self.found]
                    return report
                else:
                    self.session.fail("your code broke the grader's protocol during the import")
        except SubmissionCrashed:
            return report

    # -- the Student interface

    def call(self, op: str, *args: Any, **kwargs: Any) -> CallResult:
        if op not in OPS:
            raise ValueError(f"unknown op {op!r}")  # a bug in a hidden test, not the student's
        if self.session.crash is not None:
            raise self.session.crash
        name = child_module.NAME_OF_OP[op]
        if name not in self.found:
            raise NotImplementedBySubmission(name)
        encoder = JudgeEncoder()
        header = {"type": "call", "op": op, "args": [encoder.value(item) for item in args],
                  "kwargs": {key: encoder.value(item) for key, item in kwargs.items()}}
        header["tensors"] = encoder.tensors
        # The child reports the top-level tensor arguments after the call, as LocalStudent does.
        n_inputs = sum(isinstance(value, (torch.Tensor, Transposed)) for value in (*args, *kwargs.values()))
        started = time.monotonic()
        self.session.send(header, encoder.blob(), f"a call to {name}")
        reply, blob = self.session.receive(f"a call to {name}")
        wall = time.monotonic() - started
        try:
            return decode_reply(reply, blob, name, n_inputs, wall)
        except protocol.ProtocolError as error:
            self.session.fail(f"your code broke the grader's protocol in a call to {name}: {error}")

    def call_overhead_seconds(self) -> float:
        """The fastest of a few empty round trips to the child."""
        best = float("inf")
        for _ in range(5):
            started = time.monotonic()
            self.session.send({"type": "ping"}, what="a ping")
            reply, _ = self.session.receive("a ping")
            if reply["type"] != "pong":
                self.session.fail("your code broke the grader's protocol during a ping")
            best = min(best, time.monotonic() - started)
        return best


# ---------------------------------------------------------------- checking what came back


def decode_reply(reply: dict, blob: bytearray, name: str, n_inputs: int, wall: float) -> CallResult:
    kind = reply["type"]
    if kind == "not_implemented":
        raise NotImplementedBySubmission(name)
    if kind == "error":
        raise StudentError(protocol.clip(reply.get("kind"), 100), protocol.clip(reply.get("message")))
    if kind != "result":
        raise protocol.ProtocolError(f"unexpected reply {protocol.clip(kind, 40)!r}")
    infos = reply.get("tensors")
    if not isinstance(infos, list):
        raise protocol.ProtocolError("the reply has no tensor list")
    checked = [protocol.check_tensor_info(info) for info in infos]
    pieces = protocol.split_blob(infos, blob)
    tensors = [decode_tensor(fields, piece) for fields, piece in zip(checked, pieces)]
    output = decode_output(reply.get("output"), tensors)
    after = reply.get("inputs_after")
    if not isinstance(after, list) or len(after) != n_inputs:
        raise protocol.ProtocolError("the reply does not report each input tensor once")
    inputs_after = tuple(None if item is None else tensor_ref(item, tensors) for item in after)
    return CallResult(output=output, inputs_after=inputs_after, wall_seconds=wall)


class JudgeEncoder(protocol.Encoder):
    """``protocol.Encoder`` plus the judge-only wrappers from ``grader.suite.student``."""

    def value(self, value: Any) -> Any:
        if isinstance(value, Transposed):
            contiguous = value.tensor.transpose(value.dim0, value.dim1).contiguous()
            return self.tensor(contiguous, transpose=(value.dim0, value.dim1))
        if isinstance(value, tuple):
            return {"$tuple": [self.value(item) for item in value]}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return super().value(value)


def decode_tensor(fields: tuple, piece: memoryview) -> torch.Tensor | TensorInfo:
    dtype, shape, device, requires_grad, _ = fields
    if device == "meta":
        return TensorInfo(shape, protocol.dtype_name(dtype), "meta", requires_grad)
    return protocol.build_tensor(dtype, shape, piece)  # detached, like LocalStudent's outputs


def tensor_ref(item: Any, tensors: list) -> torch.Tensor:
    if not isinstance(item, dict) or set(item) != {"$t"} or type(item["$t"]) is not int \
            or not 0 <= item["$t"] < len(tensors) or not isinstance(tensors[item["$t"]], torch.Tensor):
        raise protocol.ProtocolError("a tensor reference is malformed")
    return tensors[item["$t"]]


def decode_info(item: Any) -> TensorInfo:
    fields = dict(item) if isinstance(item, dict) else None
    if fields is None or set(fields) != {"shape", "dtype", "device", "requires_grad"}:
        raise protocol.ProtocolError("a tensor description is malformed")
    fields["nbytes"] = 0
    fields["device"] = fields["device"] if fields["device"] in ("cpu", "meta") else "?"
    dtype, shape, device, requires_grad, _ = protocol.check_tensor_info({**fields, "device": "meta"})
    return TensorInfo(shape, protocol.dtype_name(dtype), item["device"], requires_grad)


def decode_output(item: Any, tensors: list) -> Any:
    def one(entry: Any) -> Any:
        if isinstance(entry, dict) and "$info" in entry and len(entry) == 1:
            return decode_info(entry["$info"])
        return tensor_ref(entry, tensors)

    if isinstance(item, dict) and set(item) == {"$tuple"} and isinstance(item["$tuple"], list):
        if len(item["$tuple"]) > 64:
            raise protocol.ProtocolError("the output has too many parts")
        return tuple(one(entry) for entry in item["$tuple"])
    return one(item)


def check_import_error(error: Any) -> dict:
    if not isinstance(error, dict):
        return {"kind": "Error", "message": "the import failed", "line": None, "module": ""}
    line = error.get("line")
    return {"kind": protocol.clip(error.get("kind"), 100), "message": protocol.clip(error.get("message"), 500),
            "line": line if type(line) is int else None, "module": protocol.clip(error.get("module", ""), 100)}


def explain_end(ended: str) -> str:
    if "SIGXCPU" in ended:
        return "it ran out of CPU time"
    if "SIGKILL" in ended:
        return "it was killed, for instance for using too much memory"
    if "exited" in ended:
        return f"it {ended}, for instance through os._exit()"
    return ended or "it ended"


# ---------------------------------------------------------------- public tests in one child


@dataclass
class PublicReport:
    tests: list[dict]  # nodeid, when, outcome, message: checked, but written by untrusted code
    crash: str | None


def run_public_tests(worker: WorkerProcess, files: Mapping[str, str], timeout: float) -> PublicReport:
    """Run pytest on the files inside one child; read its outcome as (untrusted) data."""
    session = ChildSession(worker, timeout)
    try:
        session.receive("start-up")
        session.send({"type": "pytest", "files": dict(files)}, what="the public tests")
        report, _ = session.receive("the public tests")
        problem = report.get("problem")
        return PublicReport(check_pytest_report(report),
                            None if problem is None else f"pytest stopped: {protocol.clip(problem, 500)}")
    except SubmissionCrashed as crash:
        return PublicReport([], crash.reason)
    except protocol.ProtocolError as error:
        return PublicReport([], f"the sandbox sent a malformed report: {error}")
    finally:
        session.close()
        if session.fault is not None:
            raise session.fault


def check_pytest_report(report: dict) -> list[dict]:
    tests = report.get("tests") if report.get("type") == "pytest_report" else None
    if not isinstance(tests, list) or len(tests) > 10_000:
        raise protocol.ProtocolError("the public-test report is not a list of tests")
    checked = []
    for test in tests:
        if not isinstance(test, dict):
            raise protocol.ProtocolError("a public-test entry is not an object")
        outcome = test.get("outcome")
        checked.append({"nodeid": protocol.clip(test.get("nodeid"), 300),
                        "when": protocol.clip(test.get("when"), 20),
                        "outcome": outcome if outcome in ("passed", "failed", "skipped") else "failed",
                        "message": protocol.clip(test.get("message", ""), 3000)})
    return checked
