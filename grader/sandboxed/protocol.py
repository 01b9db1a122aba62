"""The wire format between the judge, the worker and a sandboxed child: JSON headers and raw bytes.

A frame is ``!II`` (header length, blob length), a UTF-8 JSON header, then the blob: the raw bytes
of every tensor the header describes, concatenated in the order the header lists them (``tensors``
encodes and decodes them). Nothing is ever pickled, in either direction: the judge decodes a
child's frame with ``json.loads`` and ``torch.frombuffer`` only, after checking every size, dtype
and shape against the header.

Every word of the wire is here, once: a frame's ``type`` (``MessageKind``), the grader's finding
and note codes, how the worker finds strays (``StrayScope``) and pytest's words in the public
tests' report. Both sides name them from this module, never as bare strings.

This module runs on both sides of the trust boundary: the judge imports it as
``grader.sandboxed.protocol``; in the sandbox it arrives as source with its siblings (see
``grader.sandbox.worker_process``), so it imports nothing from the project, only the standard
library and torch.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch

FRAME_PREFIX = struct.Struct("!II")
_HEADER_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)  # json.dumps built one per frame
Buffer = bytes | bytearray | memoryview

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
# A RESULT's ``inputs_after`` entry for a tensor argument the call left as it came (dtype, shape and
# every byte): the judge takes its own copy instead of the bytes back (half the tensors of a grading).
UNCHANGED_INPUT = "$unchanged"


class MessageKind(StrEnum):
    """A frame's ``type``. Judge and worker: HELLO/READY, SPAWN/SPAWNED, REAP/REAPED. Judge and child:
    READY (it started), LOAD then IMPORTING/IMPORTED per file and LOADED, CALL answered by RESULT,
    FINDING, ERROR or NOT_IMPLEMENTED, PING/PONG, PYTEST/PYTEST_REPORT."""

    HELLO = "hello"  # once: where children get their folders, what to hide
    READY = "ready"
    SPAWN = "spawn"  # followed by one byte carrying the child's socket: fork a child
    SPAWNED = "spawned"
    REAP = "reap"  # kill the child and all it started
    REAPED = "reaped"  # with how the child ended (for messages only)
    LOAD = "load"  # write (the first time) and import the submission's files for one exercise
    IMPORTING = "importing"  # before each file: a hang or crash is charged to that file
    IMPORTED = "imported"  # after it, with the import error if any
    LOADED = "loaded"  # which of the exercise's names were found
    CALL = "call"  # one op with its arguments
    RESULT = "result"  # the op's output and its tensor arguments after the call
    FINDING = "finding"  # the grader's own finding while making the call (FindingCode)
    ERROR = "error"  # the submission's code raised, and only that
    NOT_IMPLEMENTED = "not_implemented"  # the name is missing, or it raised NotImplementedError
    PING = "ping"
    PONG = "pong"
    PYTEST = "pytest"  # run the public tests on these files
    PYTEST_REPORT = "pytest_report"  # each test's outcome as plain data


class FindingCode(StrEnum):
    """A FINDING frame's ``code``: the grader's own finding, never an ERROR of the submission's code.

    NO_TABLE (with ``parameters`` and ``buffers`` counts): learned.forward was given a table but the
    module has no single parameter, nor a single buffer, of shape [max_len, d_model]; it did not run.
    NOT_A_TENSOR (with ``returned``, the type's name): the call ran and returned something that is
    not a tensor; the rest is as for a RESULT, each non-tensor part sent as
    ``{"$returned": "<type name>", "values": <tensor ref or null>}`` (its values, when they convert).
    """

    NO_TABLE = "no_table"
    NOT_A_TENSOR = "not_a_tensor"


class NoteCode(StrEnum):
    """What the grader worked around during a call (a RESULT's ``notes``)."""

    TABLE_IN_BUFFER = "table_in_buffer"  # learned.forward put the test's table into a buffer (no such parameter)


class StrayScope(StrEnum):
    """How the worker finds what a child left behind (HELLO's ``stray_scope``; ``worker.kill_strays``)."""

    NAMESPACE = "namespace"  # bwrap: every process of the worker's PID namespace
    UID = "uid"  # the fallback as root: every process of the uids children had
    GROUP = "group"  # the fallback as another user: the child's process group only


class PytestPhase(StrEnum):
    """pytest's ``report.when`` in a PYTEST_REPORT."""

    COLLECT = "collect"
    SETUP = "setup"
    CALL = "call"
    TEARDOWN = "teardown"


class PytestOutcome(StrEnum):
    """pytest's ``report.outcome`` in a PYTEST_REPORT."""

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


def send_frame(sock: socket.socket, header: dict, blob: Buffer | Sequence[Buffer] = b"") -> None:
    """One frame in one system call when the socket takes it all (a call is a round trip: every extra
    write wakes the peer once more), the rest of a large blob after it. ``blob``: bytes, or its pieces
    in order (``tensor_codec.Encoder.buffers``), written without joining them."""
    pieces = [memoryview(piece).cast("B") for piece in (blob if isinstance(blob, (list, tuple)) else [blob])]
    pieces = [piece for piece in pieces if piece.nbytes]
    data = _HEADER_ENCODER.encode(header).encode()
    head = memoryview(FRAME_PREFIX.pack(len(data), sum(piece.nbytes for piece in pieces)) + data)
    sent = sock.sendmsg([head, *pieces])
    for piece in (head, *pieces):
        if sent < piece.nbytes:
            sock.sendall(piece[sent:])
        sent = max(0, sent - piece.nbytes)


def _recv_into(sock: socket.socket, view: memoryview, deadline: float | None) -> int:
    """One read into ``view``: how many bytes arrived (never 0: a closed peer raises)."""
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReadTimeout()
        sock.settimeout(remaining)
    try:
        count = sock.recv_into(view)
    except TimeoutError:
        raise ReadTimeout() from None
    except OSError as error:  # a reset counts as the peer going away
        raise PeerClosed(str(error)) from None
    if count == 0:
        raise PeerClosed("the other side closed the connection")
    return count


def _recv_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        received += _recv_into(sock, view[received:], deadline)
    return buffer


def _parse_frame(take: Callable[[int], bytearray], limits: Limits) -> tuple[dict, bytearray]:
    """A frame from ``take(n)`` (the stream's next ``n`` bytes); sizes are checked before anything is allocated."""
    header_len, blob_len = FRAME_PREFIX.unpack(take(FRAME_PREFIX.size))
    if header_len > limits.max_header_bytes:
        raise ProtocolError(f"a message header of {header_len} bytes is over the {limits.max_header_bytes} byte limit")
    if blob_len > limits.max_blob_bytes:
        raise ProtocolError(f"a message of {blob_len} bytes is over the {limits.max_blob_bytes} byte limit")
    raw = take(header_len)
    blob = take(blob_len) if blob_len else bytearray()
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ProtocolError(f"a message header is not valid JSON ({type(error).__name__})") from None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError("a message header is not a JSON object with a 'type'")
    return header, blob


def recv_frame(sock: socket.socket, limits: Limits = Limits(), deadline: float | None = None) -> tuple[dict, bytearray]:
    """Read one frame and not a byte more (a socket that also carries file descriptors: the worker's)."""
    return _parse_frame(lambda size: _recv_exactly(sock, size, deadline), limits)


class FrameReader:
    """The frames of one socket that carries nothing else, read in as few system calls as its peer's writes
    allow: each read takes up to ``CHUNK`` bytes, and what arrived past one frame waits for the next. A
    frame sent in one write (``send_frame``) then costs one read, not three, and two frames sent back to
    back one read in all (on a 2-core VM, 4 to 5 us less on each side of a call)."""

    CHUNK = 1 << 16

    def __init__(self, sock: socket.socket, limits: Limits = Limits()) -> None:
        self.sock = sock
        self.limits = limits
        self.pending = bytearray()  # received, not yet read
        self.chunk = bytearray(self.CHUNK)

    def read(self, deadline: float | None = None) -> tuple[dict, bytearray]:
        """The next frame: as ``recv_frame``, with the same errors."""
        return _parse_frame(lambda size: self._take(size, deadline), self.limits)

    def _take(self, size: int, deadline: float | None) -> bytearray:
        """The stream's next ``size`` bytes, in a bytearray of their own (a reply's tensors may live in it)."""
        if len(self.pending) >= size:
            taken = self.pending[:size]
            del self.pending[:size]
            return taken
        taken = bytearray(size)
        have = len(self.pending)
        taken[:have] = self.pending
        self.pending.clear()
        view, chunk = memoryview(taken), memoryview(self.chunk)
        while have < size:
            if size - have >= self.CHUNK:  # a large blob: straight into its own memory
                have += _recv_into(self.sock, view[have:], deadline)
                continue
            count = _recv_into(self.sock, chunk, deadline)
            used = min(count, size - have)
            view[have : have + used] = chunk[:used]
            self.pending += chunk[used:count]
            have += used
        return taken


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
