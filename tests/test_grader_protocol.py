"""The wire format: frames, tensors and arguments on their way to the child (replies: test_grader_replies.py).

Every malformed reply must become a ProtocolError (the exercise then counts as crashed), never a
tensor built from unchecked sizes, and never a crash of the judge.
"""

from __future__ import annotations

import gc
import json
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from grader.argument_layout import Layout, Viewed, transposed
from grader.sandbox import JudgeEncoder, decode_reply
from grader.sandbox.replies import decode_dict_state
from grader.sandbox.worker_process import BOOTSTRAP
from grader.sandboxed import protocol, tensor_codec
from grader.sandboxed.exercise_calls import Decoder, dict_state, encode_output
from grader.sandboxed.tensor_codec import Encoder
from grader.student import TABLE_IN_BUFFER, CannotCheck, NotATensor, StudentError, TensorInfo, Unsendable

GRADER_DIR = Path(__file__).resolve().parent.parent / "grader"


@pytest.fixture
def pair():
    left, right = socket.socketpair()
    yield left, right
    left.close()
    right.close()


def raw_frame(header: bytes, blob: bytes = b"") -> bytes:
    return struct.pack("!II", len(header), len(blob)) + header + blob


def test_a_frame_round_trips(pair):
    left, right = pair
    protocol.send_frame(left, {"type": "x", "n": [1, 2]}, b"\x00\x01")
    header, blob = protocol.recv_frame(right)
    assert header == {"type": "x", "n": [1, 2]} and bytes(blob) == b"\x00\x01"


def test_a_frame_sent_in_pieces_arrives_whole_when_the_socket_takes_it_in_several_writes(pair):
    """A blob of several pieces larger than the socket's buffer: sendmsg writes part of it, the rest follows."""
    left, right = pair
    left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    pieces = [bytes([index]) * size for index, size in enumerate((3, 70_000, 0, 1, 200_003), start=1)]
    sender = threading.Thread(target=protocol.send_frame, args=(left, {"type": "x"}, pieces))
    sender.start()
    header, blob = protocol.recv_frame(right)
    sender.join()
    assert header == {"type": "x"} and bytes(blob) == b"".join(pieces)


def test_a_frame_reader_gives_back_to_back_frames_whole_and_in_order(pair):
    """One read may take several frames, or a frame and part of the next: each comes out whole, in its own memory."""
    left, right = pair
    blobs = [b"", b"\x07" * 5, bytes(range(256)) * 300, b"\x01"]  # the third is larger than one read
    sender = threading.Thread(
        target=lambda: [protocol.send_frame(left, {"type": "x", "n": index}, blob) for index, blob in enumerate(blobs)]
    )
    sender.start()
    reader = protocol.FrameReader(right)
    frames = [reader.read(deadline=time.monotonic() + 10) for _ in blobs]  # a lost byte fails, not hangs
    sender.join()
    assert [header["n"] for header, _ in frames] == [0, 1, 2, 3]
    assert [bytes(blob) for _, blob in frames] == blobs
    frames[1][1][0] = 0  # a blob is its frame's own: changing it changes no other frame
    assert bytes(frames[3][1]) == b"\x01" and not reader.pending


def test_a_frame_reader_takes_a_frame_that_arrives_a_byte_at_a_time(pair):
    left, right = pair
    data = raw_frame(b'{"type": "x"}', b"abc")

    def trickle() -> None:
        for index in range(len(data)):
            left.sendall(data[index : index + 1])

    sender = threading.Thread(target=trickle)
    sender.start()
    header, blob = protocol.FrameReader(right).read(deadline=time.monotonic() + 10)
    sender.join()
    assert header == {"type": "x"} and bytes(blob) == b"abc"


def test_a_frame_reader_keeps_the_limits_the_deadline_and_the_closed_peer(pair):
    left, right = pair
    reader = protocol.FrameReader(right, protocol.Limits(max_header_bytes=64, max_blob_bytes=10))
    with pytest.raises(protocol.ReadTimeout):
        reader.read(deadline=time.monotonic() + 0.05)
    left.sendall(struct.pack("!II", 10, 11))
    with pytest.raises(protocol.ProtocolError, match="limit"):
        reader.read()
    left.close()
    with pytest.raises(protocol.PeerClosed):
        protocol.FrameReader(right).read()


def test_a_tensor_buffer_reads_the_tensor_bytes_and_keeps_its_memory_alive():
    for tensor in (torch.randn(4, 5).t(), torch.tensor([True, False]), torch.arange(6.0)[1:4], torch.zeros(0, 3)):
        expected = tensor_codec.tensor_bytes(tensor)
        buffer = tensor_codec.tensor_buffer(tensor)
        del tensor
        gc.collect()
        torch.randn(1000)  # would reuse freed memory
        assert buffer.nbytes == len(expected) and bytes(buffer) == expected


@pytest.mark.parametrize("header_len, blob_len", [(2 << 20, 0), (10, 65 << 20)])
def test_oversized_frames_are_refused_before_reading_them(pair, header_len, blob_len):
    left, right = pair
    left.sendall(struct.pack("!II", header_len, blob_len))  # nothing follows: reading on would block
    with pytest.raises(protocol.ProtocolError, match="limit"):
        protocol.recv_frame(right, protocol.Limits(1 << 20, 64 << 20), deadline=None)


@pytest.mark.parametrize("header", [b"not json", b"[1, 2]", b'{"no_type": 1}', b"\xff\xfe", b"[" * 100000])
def test_malformed_headers_are_protocol_errors(pair, header):
    left, right = pair
    left.sendall(raw_frame(header))
    with pytest.raises(protocol.ProtocolError):
        protocol.recv_frame(right)


def test_a_closed_peer_and_a_deadline_are_told_apart(pair):
    import time

    left, right = pair
    with pytest.raises(protocol.ReadTimeout):
        protocol.recv_frame(right, deadline=time.monotonic() + 0.05)
    left.close()
    with pytest.raises(protocol.PeerClosed):
        protocol.recv_frame(right)


@pytest.mark.parametrize(
    "info",
    [
        {"dtype": "object", "shape": [1], "device": "cpu", "nbytes": 8},
        {"dtype": "float32", "shape": [-1], "device": "cpu", "nbytes": 0},
        {"dtype": "float32", "shape": [1] * 9, "device": "cpu", "nbytes": 4},
        {"dtype": "float32", "shape": [2, 2], "device": "cpu", "nbytes": 12},
        {"dtype": "float32", "shape": [2], "device": "cuda", "nbytes": 8},
        {"dtype": "float32", "shape": [2.5], "device": "cpu", "nbytes": 10},
        {"dtype": "float32", "shape": [True], "device": "cpu", "nbytes": 4},
        {"dtype": "float32", "shape": [2], "device": "cpu", "nbytes": 8, "requires_grad": "yes"},
        "float32",
    ],
)
def test_bad_tensor_descriptions_are_refused(info):
    with pytest.raises(protocol.ProtocolError):
        tensor_codec.check_tensor_info(info)


def test_tensor_bytes_round_trip_every_dtype():
    for dtype in protocol.DTYPES.values():
        original = (
            (torch.arange(6) % 2).to(dtype).reshape(2, 3)
            if dtype != torch.bool
            else torch.tensor([[True, False, True]])
        )
        rebuilt = tensor_codec.build_tensor(dtype, tuple(original.shape), tensor_codec.tensor_bytes(original))
        assert rebuilt.dtype == dtype and torch.equal(rebuilt, original)
    t = torch.randn(4, 5).t()  # non-contiguous
    assert torch.equal(tensor_codec.build_tensor(torch.float32, (5, 4), tensor_codec.tensor_bytes(t)), t)
    lazy = torch.tensor([1 + 2j, -3j], dtype=torch.complex64).conj()  # memory holds the unconjugated values
    assert torch.equal(tensor_codec.build_tensor(torch.complex64, (2,), tensor_codec.tensor_bytes(lazy)), lazy)
    sliced = torch.arange(10.0, requires_grad=True)[3:7]  # an offset into its storage, and a graph
    assert torch.equal(tensor_codec.build_tensor(torch.float32, (4,), tensor_codec.tensor_bytes(sliced)), sliced)


def test_a_bool_tensor_from_arbitrary_bytes_holds_only_true_and_false():
    rebuilt = tensor_codec.build_tensor(torch.bool, (3,), b"\x00\x02\xff")
    assert rebuilt.tolist() == [False, True, True]


def test_arguments_survive_the_trip_to_the_child():
    encoder = JudgeEncoder()
    t = torch.arange(6.0).reshape(2, 3)
    values = [
        None,
        True,
        3,
        2.5,
        float("inf"),
        float("nan"),
        "half",
        (1, 2),
        [3],
        torch.float64,
        transposed(t, 0, 1),
        torch.empty(2, 3, device="meta"),
    ]
    header = json.loads(json.dumps([encoder.value(v) for v in values], allow_nan=False))
    decoder = Decoder(encoder.tensors, bytearray(encoder.blob()))
    decoded = [decoder.value(item) for item in header]
    assert decoded[:5] == [None, True, 3, 2.5, float("inf")]
    assert decoded[5] != decoded[5]  # nan
    assert decoded[6:10] == ["half", (1, 2), [3], torch.float64]
    assert torch.equal(decoded[10], t) and not decoded[10].is_contiguous()
    assert decoded[11].device.type == "meta" and decoder.has_meta


def test_every_layout_arrives_with_its_values_and_strides():
    t = torch.arange(2 * 3 * 4 * 5, dtype=torch.float64).reshape(2, 3, 4, 5)
    layouts = {
        "heads transposed": Layout(order=(0, 2, 1, 3)),
        "channels last": Layout(order=(0, 2, 3, 1)),
        "a slice of a fused projection": Layout(window=(3, 5, 1, 15)),
        "every other token": Layout(order=(1, 0, 2, 3), window=(2, 1, 2, 9)),
        "shared by the heads": Layout(broadcast=(1,)),
        "all at once": Layout((3, 2, 1, 0), (0, 0, 3, 4), (2,)),
    }
    for name, layout in layouts.items():
        values = layout.values(t)
        encoder = JudgeEncoder()
        header = json.loads(json.dumps(encoder.value(Viewed(values, layout))))
        arrived = Decoder(encoder.tensors, bytearray(encoder.blob())).value(header)
        assert torch.equal(arrived, values) and not arrived.is_contiguous(), name
    assert Layout(broadcast=(1,)).values(t)[:, 2].equal(t[:, 0])
    with pytest.raises(ValueError, match="broadcast"):
        Layout(broadcast=(1,)).storage(t)  # values that differ along the axis cannot be broadcast


def test_a_dict_of_plain_values_and_tensors_reaches_the_child_as_a_dict():
    encoder = JudgeEncoder()
    config = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "table": torch.ones(2)}
    header = json.loads(json.dumps(encoder.value(config), allow_nan=False))
    decoded = Decoder(encoder.tensors, bytearray(encoder.blob())).value(header)
    assert set(decoded) == set(config) and decoded["factor"] == 4.0 and decoded["rope_type"] == "yarn"
    assert torch.equal(decoded["table"], torch.ones(2))
    with pytest.raises(TypeError):
        encoder.value({1: "a key that is not a string"})


def test_nothing_is_unpickled_anywhere_in_the_grader():
    """The trust boundary: no pickle, no torch.load (pickle too), no marshal, in any grader module."""
    banned = re.compile(
        r"\b(import|from)\s+(pickle|cPickle|dill|marshal|shelve|multiprocessing)\b"
        r"|\b(pickle|marshal|dill)\.\w+\(|\btorch\.load\(|\bnp\.load\("
    )
    paths = sorted(GRADER_DIR.rglob("*.py"))
    assert GRADER_DIR / "sandboxed" / "protocol.py" in paths and GRADER_DIR / "sandbox" / "replies.py" in paths
    for path in paths:
        found = banned.search(path.read_text())
        assert found is None, f"{path.relative_to(GRADER_DIR)}: {found.group(0)}"
    assert banned.search("x = pickle.loads(data)") and banned.search("import multiprocessing")


def test_the_bootstrap_serves_the_sources_it_receives_as_one_package():
    """The worker's code arrives as source, with no order to load it in: siblings import each other."""
    sources = {
        "worker": "from . import zeta\nfrom .alpha import VALUE\n\n"
        "def main(control):\n    control.sendall((zeta.NAME + VALUE).encode())\n",
        "zeta": "from .alpha import VALUE\nNAME = __name__ + ':' + VALUE + ':'\n",
        "alpha": "VALUE = 'ok'\n",
        "__init__": "",
    }
    judge_end, worker_end = socket.socketpair()
    process = subprocess.Popen([sys.executable, "-I", "-B", "-c", BOOTSTRAP], stdin=worker_end)
    worker_end.close()
    try:
        data = json.dumps(sources).encode()
        judge_end.sendall(struct.pack("!I", len(data)) + data)
        judge_end.settimeout(30)
        reply = b""
        while chunk := judge_end.recv(100):
            reply += chunk
        assert process.wait(timeout=30) == 0
    finally:
        judge_end.close()
        process.kill()
    assert reply == b"sandbox_runner.zeta:ok:ok"


def test_the_child_reports_an_input_unchanged_only_when_its_dtype_shape_and_bytes_are():
    from grader.sandboxed.child import input_after, tensor_state

    encoder = tensor_codec.Encoder()
    kept, written, reshaped = torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3)
    before = [tensor_state(tensor) for tensor in (kept, written, reshaped)]
    written[1, 2] = 0.5
    reshaped.t_()  # the same bytes in another shape
    after = [input_after(tensor, state, encoder) for tensor, state in zip((kept, written, reshaped), before)]
    assert after == [protocol.UNCHANGED_INPUT, {"$t": 0}, {"$t": 1}]
    meta = torch.empty(2, device="meta")
    assert tensor_state(meta) is None and input_after(meta, None, encoder) is None
