"""The sandboxed child: the only process in which a submission's code runs.

The worker forks one child per submission (see ``worker``); it serves the exercises one after
another. The child first confines itself (``confinement``), then writes the submission's files
in its private folder, imports them, and answers the judge's calls over its socket with plain
JSON and raw tensor bytes (``protocol``).

Nothing the child says is believed: the judge checks every frame and recomputes every expected
value itself. The child never returns into the worker's code: it always ends in ``os._exit``.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import traceback
from typing import Any

import torch

from . import protocol, tensor_codec
from .confinement import SOCKET_FD, SUBMISSION_PACKAGE, confine
from .exercise_calls import DESCRIBED_OPS, Decoder, Finding, dict_state, encode_output, run_op
from .protocol import FindingCode, MessageKind, safe_str
from .pytest_plugin import run_pytest
from .warm_up import warm_up


def run(sock: socket.socket, spec: dict) -> None:
    """Entry point in the freshly forked child; never returns."""
    try:
        workdir = confine(sock, spec)
        Child(socket.socket(fileno=SOCKET_FD), workdir, bool(spec.get("warm_meta_kernels"))).serve()
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return to the worker
        pass
    finally:
        os._exit(0)


class Child:
    def __init__(self, sock: socket.socket, workdir: str, warm_meta_kernels: bool = False) -> None:
        self.sock = sock
        self.warm_meta_kernels = warm_meta_kernels
        self.workdir = workdir
        self.package_dir = os.path.join(workdir, SUBMISSION_PACKAGE)  # the submission package's folder
        self.found: dict[str, Any] = {}
        self.imported: set[str] = set()  # tried already, with or without success
        self.name_of_op: dict[str, str] = {}  # op -> the submitted name it calls, from the judge
        self.frames = protocol.FrameReader(sock)

    def send(self, header: dict, blob: protocol.Buffer | list[memoryview] = b"") -> None:
        protocol.send_frame(self.sock, header, blob)

    def serve(self) -> None:
        warm_up(self.warm_meta_kernels)  # forked ahead, nobody waits yet: see warm_up
        self.send({"type": MessageKind.READY, "pid": os.getpid(), "uid": os.getuid()})
        while True:
            try:
                header, blob = self.frames.read()
            except protocol.PeerClosed:
                return
            kind = header["type"]
            if kind == MessageKind.LOAD:
                self.load(header)
            elif kind == MessageKind.CALL:
                self.call(header, blob)
            elif kind == MessageKind.PING:
                self.send({"type": MessageKind.PONG})
            elif kind == MessageKind.PYTEST:
                self.run_public_tests(header)
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
            for folder in (self.workdir, self.package_dir):  # (all finders' caches: 1.5 ms of copied pages)
                sys.path_importer_cache.pop(folder, None)
        self.name_of_op.update(header["ops"])
        wanted = list(header["names"])
        for filename in header["order"]:
            if all(name in self.found for name in wanted):
                break
            if filename in self.imported:
                continue
            self.imported.add(filename)
            self.send({"type": MessageKind.IMPORTING, "file": filename})
            error = self.import_file(filename)
            self.send({"type": MessageKind.IMPORTED, "file": filename, "error": error})
        self.send(
            {
                "type": MessageKind.LOADED,
                "found": sorted(self.found),
                "missing": [n for n in wanted if n not in self.found],
            }
        )

    def import_file(self, filename: str) -> dict | None:
        stem = filename[:-3]
        try:
            module = importlib.import_module(f"{SUBMISSION_PACKAGE}.{stem}")
        except BaseException as error:  # noqa: BLE001 - SystemExit at import is the student's too
            return describe_import_error(error, filename)
        for name in dir(module):
            if not name.startswith("_") and name not in self.found:
                self.found[name] = getattr(module, name)
        return None

    # -- calls

    def call(self, header: dict, blob: bytearray) -> None:
        op = header["op"]
        name = self.name_of_op[op]
        decoder = Decoder(header["tensors"], blob)
        args = [decoder.value(item) for item in header["args"]]
        kwargs = {key: decoder.value(item) for key, item in header["kwargs"].items()}
        # As in LocalStudent: the tensors among the top-level arguments, args then kwargs.
        inputs = [value for value in (*args, *kwargs.values()) if isinstance(value, torch.Tensor)]
        dicts = [value for value in (*args, *kwargs.values()) if type(value) is dict]
        as_info = (
            decoder.has_meta or kwargs.get("device") == "meta" or op in DESCRIBED_OPS or header.get("described") is True
        )
        before = [tensor_state(tensor) for tensor in inputs]
        target = self.found.get(name)
        if target is None:
            self.send({"type": MessageKind.NOT_IMPLEMENTED, "name": name})
            return
        notes: list[str] = []
        try:
            output = run_op(op, target, args, kwargs, notes)
        except Finding as finding:  # the grader's own check, not the student's exception
            self.send({"type": MessageKind.FINDING, "code": finding.code, **finding.details})
            return
        except NotImplementedError:
            self.send({"type": MessageKind.NOT_IMPLEMENTED, "name": name})
            return
        except BaseException as error:  # noqa: BLE001 - report, do not die, on SystemExit too
            self.send({"type": MessageKind.ERROR, "kind": type(error).__name__, "message": safe_str(error)})
            return
        self.send_output(output, inputs, before, dicts, as_info, notes)

    def send_output(
        self, output: Any, inputs: list, before: list, dicts: list, as_info: bool, notes: list[str]
    ) -> None:
        encoder = tensor_codec.Encoder()
        encoded, returned = encode_output(output, encoder, as_info)
        after = [input_after(tensor, state, encoder) for tensor, state in zip(inputs, before)]
        header = {
            "type": MessageKind.RESULT,
            "output": encoded,
            "inputs_after": after,
            "dicts_after": [dict_state(given) for given in dicts],
            "tensors": encoder.tensors,
            "notes": notes,
        }
        if returned is not None:  # a finding of the grader's: it travels as one, with the values
            header.update(type=MessageKind.FINDING, code=FindingCode.NOT_A_TENSOR, returned=returned)
        self.send(header, encoder.buffers())

    # -- public tests

    def run_public_tests(self, header: dict) -> None:
        self.write_files(header["files"])
        recorder = run_pytest(self.workdir, self.package_dir)
        self.send({"type": MessageKind.PYTEST_REPORT, "tests": recorder.tests, "problem": recorder.problem})


def tensor_state(tensor: torch.Tensor) -> tuple | None:
    """What an in-place change would alter: dtype, shape and bytes (None on the meta device: no values)."""
    if tensor.device.type == "meta":
        return None
    return tensor.dtype, tuple(tensor.shape), tensor_codec.tensor_bytes(tensor)


def input_after(tensor: torch.Tensor, before: tuple | None, encoder: tensor_codec.Encoder) -> Any:
    """A tensor argument as the call left it: None (on the meta device now), the word for unchanged, or its values."""
    if tensor.device.type == "meta":
        return None
    if before is not None and tensor_state(tensor) == before:
        return protocol.UNCHANGED_INPUT
    return encoder.tensor(tensor)


def describe_import_error(error: BaseException, filename: str) -> dict:
    """What went wrong while importing, in parts the judge turns into a sentence."""
    described = {"kind": type(error).__name__, "message": safe_str(error), "file": filename, "line": None}
    if isinstance(error, SyntaxError):
        described["line"] = error.lineno
        described["message"] = safe_str(error.msg)
    elif isinstance(error, ImportError):
        described["module"] = safe_str(error.name or "")
    else:
        frames = [
            frame for frame in traceback.extract_tb(error.__traceback__) if os.path.basename(frame.filename) == filename
        ]
        if frames:
            described["line"] = frames[-1].lineno
    if isinstance(error, SystemExit):
        described["message"] = f"exit code {safe_str(error.code)}"
    return described
