"""The sandboxed child: the only process in which a submission's code runs.

The worker forks one child per exercise (see ``grader.worker``). The child first confines itself
(new session, no inherited descriptors but its socket, resource limits, an unprivileged uid of
its own, no new privileges, an empty environment, a private working folder), then writes the
submission's files there, imports them, and answers the judge's calls over its socket with
plain JSON and raw tensor bytes (``grader.protocol``).

Nothing the child says is believed: the judge checks every frame and recomputes every expected
value itself. The child never returns into the worker's code: it always ends in ``os._exit``.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import resource
import signal
import socket
import sys
import tempfile
import traceback
from typing import Any

import torch

from . import protocol

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
SOCKET_FD = 3
PACKAGE = "exercises"  # the submission's files are importable as exercises.<stem> and as <stem>
NAME_OF_OP = {
    "attention": "attention",
    "sinusoidal_encoding": "sinusoidal_encoding",
    "apply_rope": "apply_rope",
    "alibi_slopes": "alibi_slopes",
    "alibi_bias": "alibi_bias",
    "learned.parameters": "LearnedPositionalEmbedding",
    "learned.forward": "LearnedPositionalEmbedding",
}


def run(sock: socket.socket, spec: dict) -> None:
    """Entry point in the freshly forked child; never returns."""
    try:
        workdir = confine(sock, spec)
        Child(socket.socket(fileno=SOCKET_FD), workdir).serve()
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return to the worker
        pass
    finally:
        os._exit(0)


# ---------------------------------------------------------------- confinement


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
    sys.path[:] = [workdir, os.path.join(workdir, PACKAGE)] + [
        entry for entry in sys.path if entry and not entry.startswith(hidden or ("\0",))]
    sys.meta_path.insert(0, BlockedImports(spec.get("blocked_modules", ())))
    for name in [name for name in sys.modules if name.startswith("sandbox_runner")]:
        del sys.modules[name]
    return workdir


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


# ---------------------------------------------------------------- serving the judge


class Child:
    def __init__(self, sock: socket.socket, workdir: str) -> None:
        self.sock = sock
        self.workdir = workdir
        self.package_dir = os.path.join(workdir, PACKAGE)
        self.found: dict[str, Any] = {}
        self.imported: set[str] = set()  # tried already, with or without success
        self.limits = protocol.Limits()

    def send(self, header: dict, blob: bytes = b"") -> None:
        protocol.send_frame(self.sock, header, blob)

    def serve(self) -> None:
        self.send({"type": "ready", "pid": os.getpid(), "uid": os.getuid()})
        while True:
            try:
                header, blob = protocol.recv_frame(self.sock, self.limits)
            except protocol.PeerClosed:
                return
            kind = header["type"]
            if kind == "load":
                self.load(header)
            elif kind == "call":
                self.call(header, blob)
            elif kind == "ping":
                self.send({"type": "pong"})
            elif kind == "pytest":
                self.run_pytest(header)
            else:
                return

    # -- loading the submission

    def write_files(self, files: dict) -> None:
        os.makedirs(self.package_dir, exist_ok=True)
        for name, source in files.items():
            # The judge has checked the names already; basename() keeps this side honest too.
            with open(os.path.join(self.package_dir, os.path.basename(name)), "w", encoding="utf-8") as handle:
                handle.write(source)

    def load(self, header: dict) -> None:
        """Import files in the judge's order until the exercise's names are all found."""
        if "files" in header:  # the first exercise of this child
            self.write_files(header["files"])
            importlib.invalidate_caches()
        wanted = list(header["names"])
        for filename in header["order"]:
            if all(name in self.found for name in wanted):
                break
            if filename in self.imported:
                continue
            self.imported.add(filename)
            self.send({"type": "importing", "file": filename})
            error = self.import_file(filename)
            self.send({"type": "imported", "file": filename, "error": error})
        self.send({"type": "loaded", "found": sorted(self.found), "missing": [n for n in wanted if n not in self.found]})

    def import_file(self, filename: str) -> dict | None:
        stem = filename[:-3]
        try:
            module = importlib.import_module(f"{PACKAGE}.{stem}")
        except BaseException as error:  # noqa: BLE001 - SystemExit at import is the student's too
            return describe_import_error(error, filename)
        for name in dir(module):
            if not name.startswith("_") and name not in self.found:
                self.found[name] = getattr(module, name)
        return None

    # -- calls

    def call(self, header: dict, blob: bytearray) -> None:
        op = header["op"]
        name = NAME_OF_OP[op]
        decoder = Decoder(header["tensors"], blob)
        args = [decoder.value(item) for item in header["args"]]
        kwargs = {key: decoder.value(item) for key, item in header["kwargs"].items()}
        # As in LocalStudent: the tensors among the top-level arguments, args then kwargs.
        inputs = [value for value in (*args, *kwargs.values()) if isinstance(value, torch.Tensor)]
        as_info = decoder.has_meta or kwargs.get("device") == "meta" or op == "learned.parameters"
        target = self.found.get(name)
        if target is None:
            self.send({"type": "not_implemented", "name": name})
            return
        try:
            output = run_op(op, target, args, kwargs)
        except NotImplementedError:
            self.send({"type": "not_implemented", "name": name})
            return
        except BaseException as error:  # noqa: BLE001 - report, do not die, on SystemExit too
            self.send({"type": "error", "kind": type(error).__name__, "message": safe_str(error)})
            return
        self.send_output(output, inputs, as_info)

    def send_output(self, output: Any, inputs: list, as_info: bool) -> None:
        encoder = protocol.Encoder()
        try:
            encoded = encode_output(output, encoder, as_info)
        except TypeError as error:
            self.send({"type": "error", "kind": "TypeError", "message": str(error)})
            return
        after = [None if tensor.device.type == "meta" else encoder.tensor(tensor) for tensor in inputs]
        self.send({"type": "result", "output": encoded, "inputs_after": after, "tensors": encoder.tensors},
                  encoder.blob())

    # -- public tests

    def run_pytest(self, header: dict) -> None:
        self.write_files(header["files"])
        import pytest  # imported here: hidden grading never needs it

        recorder = PytestRecorder()
        try:
            pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", self.workdir, "--confcutdir",
                         self.workdir, "-o", "addopts=", self.package_dir], plugins=[recorder])
        except BaseException as error:  # noqa: BLE001
            recorder.problem = f"{type(error).__name__}: {safe_str(error)}"
        self.send({"type": "pytest_report", "tests": recorder.tests, "problem": recorder.problem})


def run_op(op: str, target: Any, args: list, kwargs: dict) -> Any:
    if op == "learned.parameters":
        return tuple(target(max_len=kwargs["max_len"], d_model=kwargs["d_model"]).parameters())
    if op == "learned.forward":
        return learned_forward(target, **kwargs)
    return target(*args, **kwargs)


def learned_forward(cls, max_len, d_model, x, table=None, dtype=None, device=None):
    module = cls(max_len=max_len, d_model=d_model)
    if table is not None:
        tables = [p for p in module.parameters() if tuple(p.shape) == (max_len, d_model)]
        if len(tables) != 1:
            raise ValueError(f"the module has {len(tables)} parameters of shape [max_len, d_model]; "
                             f"exactly one was expected")
        with torch.no_grad():
            tables[0].copy_(table)
    if dtype is not None:
        module = module.to(protocol.DTYPES[dtype])
    if device is not None:
        module = module.to(device)
    return module(x)


def encode_output(output: Any, encoder: protocol.Encoder, as_info: bool) -> Any:
    def one(tensor: torch.Tensor) -> Any:
        if as_info or tensor.device.type == "meta":
            return {"$info": {"shape": list(tensor.shape), "dtype": protocol.dtype_name(tensor.dtype),
                              "device": tensor.device.type, "requires_grad": bool(tensor.requires_grad)}}
        return encoder.tensor(tensor)

    if isinstance(output, torch.Tensor):
        return one(output)
    if isinstance(output, (tuple, list)) and output and all(isinstance(item, torch.Tensor) for item in output):
        return {"$tuple": [one(item) for item in output]}
    # The contract's wording (grader.suite.student), the same as LocalStudent's.
    raise TypeError(f"returned {type(output).__name__} where a tensor was expected")


class Decoder:
    """Builds the call's arguments from the judge's frame (trusted input) and keeps every tensor."""

    def __init__(self, infos: list, blob: bytearray) -> None:
        self.infos = infos
        self.pieces = protocol.split_blob(infos, blob)
        self.has_meta = False

    def value(self, item: Any) -> Any:
        if isinstance(item, list):
            return [self.value(entry) for entry in item]
        if not isinstance(item, dict):
            return item
        if "$t" in item:
            return self.tensor(item["$t"])
        if "$tuple" in item:
            return tuple(self.value(entry) for entry in item["$tuple"])
        if "$f" in item:
            return float(item["$f"])
        if "$dtype" in item:
            return protocol.DTYPES[item["$dtype"]]
        raise ValueError(f"unknown value {item!r}")

    def tensor(self, index: int) -> torch.Tensor:
        info = self.infos[index]
        dtype, shape, device, requires_grad, _ = protocol.check_tensor_info(info)
        if device == "meta":
            self.has_meta = True
            tensor = torch.empty(shape, dtype=dtype, device="meta")
        else:
            tensor = protocol.build_tensor(dtype, shape, self.pieces[index])
        if "transpose" in info:
            tensor = tensor.transpose(*info["transpose"])
        if requires_grad:
            tensor.requires_grad_(True)
        return tensor


def describe_import_error(error: BaseException, filename: str) -> dict:
    """What went wrong while importing, in parts the judge turns into a sentence."""
    described = {"kind": type(error).__name__, "message": safe_str(error), "file": filename, "line": None}
    if isinstance(error, SyntaxError):
        described["line"] = error.lineno
        described["message"] = safe_str(error.msg)
    elif isinstance(error, ImportError):
        described["module"] = safe_str(error.name or "")
    else:
        frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                  if os.path.basename(frame.filename) == filename]
        if frames:
            described["line"] = frames[-1].lineno
    if isinstance(error, SystemExit):
        described["message"] = f"exit code {safe_str(error.code)}"
    return described


def safe_str(value: Any) -> str:
    try:
        return protocol.clip(str(value))
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        return "<unprintable>"


class PytestRecorder:
    """A tiny pytest plugin: keeps each test's outcome as plain data."""

    def __init__(self) -> None:
        self.tests: list[dict] = []
        self.problem: str | None = None

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or report.outcome != "passed":
            message = "" if report.passed else safe_str(report.longreprtext)
            self.tests.append({"nodeid": safe_str(report.nodeid), "when": report.when,
                               "outcome": report.outcome, "message": message})

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.tests.append({"nodeid": safe_str(report.nodeid), "when": "collect", "outcome": "failed",
                               "message": safe_str(report.longreprtext)})
