"""The wire format between the judge, the worker and a sandboxed child: JSON headers and raw bytes.

A frame is ``!II`` (header length, blob length), a UTF-8 JSON header, then the blob: the raw bytes
of every tensor the header describes, concatenated in the order the header lists them. Nothing is
ever pickled, in either direction: the judge decodes a child's frame with ``json.loads`` and
``torch.frombuffer`` only, after checking every size, dtype and shape against the header.

Every word of the wire is here, once: a frame's ``type`` (``MessageKind``), the grader's finding
and note codes, how the worker finds strays (``StrayScope``) and pytest's words in the public
tests' report. Both sides name them from this module, never as bare strings.

This module runs on both sides of the trust boundary: the judge imports it as
``grader.sandboxed.protocol``; in the sandbox it arrives as source with its siblings (see
``grader.sandbox.worker_process``), so it imports nothing from the project, only the standard
library and torch.
"""

from __future__ import annotations

import ctypes
import json
import math
import socket
import struct
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch

FRAME_PREFIX = struct.Struct("!II")

# Every dtype a tensor may have on the wire. The judge refuses any other name from a child.
DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}
MAX_DIMS = 8
MAX_PARTS = 64  # tensors in one output tuple
MAX_ERROR_CHARS = 2000

class MessageKind(StrEnum):
    """A frame's ``type``: what it is. The judge sends and the worker and child answer, in pairs."""

    # judge <-> worker (the worker's control socket)
    HELLO = "hello"  # judge -> worker, once: where children get their folders, what to hide
    READY = "ready"  # worker -> judge after HELLO; child -> judge when it starts
    SPAWN = "spawn"  # judge -> worker, then one byte carrying the child's socket: fork a child
    SPAWNED = "spawned"
    REAP = "reap"  # judge -> worker: kill the child and all it started
    REAPED = "reaped"  # with how the child ended (for messages only)
    # judge <-> child
    LOAD = "load"  # write (the first time) and import the submission's files for one exercise
    IMPORTING = "importing"  # child -> judge before each file: a hang or crash is charged to that file
    IMPORTED = "imported"  # ... after it, with the import error if any
    LOADED = "loaded"  # which of the exercise's names were found
    CALL = "call"  # one op with its arguments
    RESULT = "result"  # the op's output and its tensor arguments after the call
    FINDING = "finding"  # the grader's own finding while making the call (see FindingCode)
    ERROR = "error"  # the submission's code raised (only that)
    NOT_IMPLEMENTED = "not_implemented"  # the name is missing, or it raised NotImplementedError
    PING = "ping"
    PONG = "pong"
    PYTEST = "pytest"  # run the public tests on these files
    PYTEST_REPORT = "pytest_report"  # each test's outcome as plain data


# The grader's own findings, which a child sends in a frame of their own kind, never as an ERROR
# (an ERROR frame is an exception raised by the submission's code, and only that):
#   {"type": FINDING, "code": NO_TABLE, "parameters": n, "buffers": m}
#       learned.forward was given a table but the module has no single parameter, nor a single
#       buffer, of shape [max_len, d_model] to copy it into; the call did not run.
#   {"type": FINDING, "code": NOT_A_TENSOR, "returned": "<type name>", "notes": [...],
#    "output": ..., "inputs_after": ..., "tensors": ...}
#       the call ran and returned something that is not a tensor (an ndarray, a list, None); the
#       output is sent as for a RESULT, with each non-tensor part as
#       {"$returned": "<type name>", "values": <tensor ref or null>} (its values converted, when they do).
class FindingCode(StrEnum):
    NO_TABLE = "no_table"
    NOT_A_TENSOR = "not_a_tensor"


class NoteCode(StrEnum):
    """What the grader worked around during a call: a RESULT frame's ``notes``."""

    TABLE_IN_BUFFER = "table_in_buffer"  # learned.forward put the test's table into a buffer (no such parameter)


class StrayScope(StrEnum):
    """How the worker finds what a child left behind (HELLO's ``stray_scope``; see ``worker.kill_strays``)."""

    NAMESPACE = "namespace"  # bwrap: every process of the worker's PID namespace
    UID = "uid"  # the fallback as root: every process of the uids children had
    GROUP = "group"  # the fallback as another user: the child's process group only


class PytestPhase(StrEnum):
    """pytest's ``report.when``, as a PYTEST_REPORT carries it."""

    COLLECT = "collect"
    SETUP = "setup"
    CALL = "call"
    TEARDOWN = "teardown"


class PytestOutcome(StrEnum):
    """pytest's ``report.outcome``, as a PYTEST_REPORT carries it."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed frame within the limits."""


class PeerClosed(ProtocolError):
    """The peer closed its end (a child that exited or was killed)."""


class ReadTimeout(Exception):
    """No complete frame arrived before the deadline."""


@dataclass(frozen=True)
class Limits:
    """How large a frame the reading side accepts."""

    max_header_bytes: int = 1 << 20
    max_blob_bytes: int = 64 << 20


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------- framing


def send_frame(sock: socket.socket, header: dict, blob: bytes | bytearray | memoryview = b"") -> None:
    data = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    sock.sendall(FRAME_PREFIX.pack(len(data), len(blob)) + data)
    if blob:
        sock.sendall(blob)


def _recv_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReadTimeout()
            sock.settimeout(remaining)
        try:
            count = sock.recv_into(view[received:], size - received)
        except socket.timeout:
            raise ReadTimeout() from None
        except OSError as error:  # a reset counts as the peer going away
            raise PeerClosed(str(error)) from None
        if count == 0:
            raise PeerClosed("the other side closed the connection")
        received += count
    return buffer


def recv_frame(sock: socket.socket, limits: Limits = Limits(),
               deadline: float | None = None) -> tuple[dict, bytearray]:
    """Read one frame; sizes are checked before anything is allocated."""
    header_len, blob_len = FRAME_PREFIX.unpack(_recv_exactly(sock, FRAME_PREFIX.size, deadline))
    if header_len > limits.max_header_bytes:
        raise ProtocolError(f"a message header of {header_len} bytes is over the {limits.max_header_bytes} byte limit")
    if blob_len > limits.max_blob_bytes:
        raise ProtocolError(f"a message of {blob_len} bytes is over the {limits.max_blob_bytes} byte limit")
    raw = _recv_exactly(sock, header_len, deadline)
    blob = _recv_exactly(sock, blob_len, deadline) if blob_len else bytearray()
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ProtocolError(f"a message header is not valid JSON ({type(error).__name__})") from None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError("a message header is not a JSON object with a 'type'")
    return header, blob


# ---------------------------------------------------------------- values -> JSON + blob


class Encoder:
    """Turns a tree of plain values and tensors into JSON plus one blob of tensor bytes.

    ``meta`` tensors travel as descriptions only. A ``transpose`` pair on a tensor tells the
    receiver to build the contiguous tensor it was given and hand on ``.transpose(d0, d1)`` of it.
    """

    def __init__(self) -> None:
        self.tensors: list[dict] = []
        self.chunks: list[bytes] = []

    def tensor(self, tensor: torch.Tensor, transpose: tuple[int, int] | None = None) -> dict:
        info = {"dtype": dtype_name(tensor.dtype), "shape": list(tensor.shape),
                "device": tensor.device.type, "requires_grad": bool(tensor.requires_grad),
                "nbytes": 0}
        if transpose is not None:
            info["transpose"] = [int(transpose[0]), int(transpose[1])]
        if tensor.device.type != "meta":
            data = tensor_bytes(tensor)
            info["nbytes"] = len(data)
            self.chunks.append(data)
        self.tensors.append(info)
        return {"$t": len(self.tensors) - 1}

    def value(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else {"$f": repr(value)}
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, torch.dtype):
            return {"$dtype": dtype_name(value)}
        if isinstance(value, tuple):
            return {"$tuple": [self.value(item) for item in value]}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        raise TypeError(f"cannot send a {type(value).__name__} to the sandbox")

    def blob(self) -> bytes:
        return b"".join(self.chunks)


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The raw bytes of a CPU tensor in row-major order, without numpy."""
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    if flat.numel() == 0:
        return b""
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)  # bool storage is one byte per element, but normalise to 0/1
    return ctypes.string_at(flat.data_ptr(), flat.numel() * flat.element_size())


# ---------------------------------------------------------------- JSON + blob -> values (checked)


def check_tensor_info(info: Any) -> tuple[torch.dtype, tuple[int, ...], str, bool, int]:
    """Validate one tensor description from the peer; return (dtype, shape, device, requires_grad, nbytes)."""
    if not isinstance(info, dict):
        raise ProtocolError("a tensor description is not an object")
    dtype = DTYPES.get(info.get("dtype")) if isinstance(info.get("dtype"), str) else None
    if dtype is None:
        raise ProtocolError(f"unsupported tensor dtype {str(info.get('dtype'))[:40]!r}")
    shape = info.get("shape")
    if (not isinstance(shape, list) or len(shape) > MAX_DIMS
            or not all(type(size) is int and 0 <= size < (1 << 40) for size in shape)):
        raise ProtocolError("a tensor shape is not a short list of non-negative integers")
    device = info.get("device")
    if device not in ("cpu", "meta"):
        raise ProtocolError("a tensor device is neither 'cpu' nor 'meta'")
    requires_grad = info.get("requires_grad", False)
    nbytes = info.get("nbytes", 0)
    if type(requires_grad) is not bool or type(nbytes) is not int or nbytes < 0:
        raise ProtocolError("a tensor description has a malformed field")
    expected = math.prod(shape) * element_size(dtype) if device == "cpu" else 0
    if nbytes != expected:
        raise ProtocolError(f"a tensor of shape {shape} and dtype {dtype_name(dtype)} "
                            f"should take {expected} bytes, the message says {nbytes}")
    return dtype, tuple(shape), device, requires_grad, nbytes


def element_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def build_tensor(dtype: torch.dtype, shape: tuple[int, ...], data: memoryview | bytes) -> torch.Tensor:
    """A fresh CPU tensor (own memory) from raw bytes already checked to have the right length."""
    if len(data) == 0:
        return torch.empty(shape, dtype=dtype)
    if dtype == torch.bool:
        # Any byte other than 0/1 in a bool tensor is undefined behaviour; go through uint8.
        return torch.frombuffer(bytearray(data), dtype=torch.uint8).reshape(shape) != 0
    if dtype.is_complex:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        pairs = torch.frombuffer(bytearray(data), dtype=real).reshape(*shape, 2)
        return torch.view_as_complex(pairs)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)


def split_blob(infos: list, blob: bytearray) -> list[memoryview]:
    """Cut the blob into one piece per tensor, checking that the lengths add up exactly."""
    view = memoryview(blob)
    pieces, offset = [], 0
    for info in infos:
        nbytes = info["nbytes"]
        pieces.append(view[offset:offset + nbytes])
        offset += nbytes
    if offset != len(blob):
        raise ProtocolError(f"the tensors described take {offset} bytes but {len(blob)} arrived")
    return pieces


def clip(text: Any, limit: int = MAX_ERROR_CHARS) -> str:
    """A peer's text, forced to a short str."""
    text = text if isinstance(text, str) else repr(text)
    return text if len(text) <= limit else text[:limit] + " [...]"


def safe_str(value: Any) -> str:
    """``str(value)``, clipped, for any value a submission made (its ``__str__`` may raise anything)."""
    try:
        return clip(str(value))
    except BaseException:  # noqa: BLE001
        return "<unprintable>"
