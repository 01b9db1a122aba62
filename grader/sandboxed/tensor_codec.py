"""Tensors on the wire: values to a JSON header plus one blob of raw bytes, and back, checked.

A tensor travels as a description in the header (dtype from ``protocol.DTYPES``, shape, device,
``requires_grad``, byte count) and its row-major bytes in the frame's blob. The reading side
checks every description against the limits and the blob's length (``check_tensor_info``,
``split_blob``) before ``build_tensor`` copies the bytes into fresh memory with
``torch.frombuffer``. Like ``protocol``, this runs on both sides of the sandbox and imports only
the standard library, torch and its siblings.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import torch

from .protocol import DTYPES, MAX_DIMS, ProtocolError, dtype_name

# ---------------------------------------------------------------- values -> JSON + blob

IN_PLACE_BYTES = 1 << 16  # a tensor this large or larger is sent from its own memory


class Encoder:
    """Turns a tree of plain values and tensors into JSON plus one blob of tensor bytes.

    ``meta`` tensors travel as descriptions only. A ``view`` on a tensor tells the receiver to build
    the contiguous storage it was given and hand on a view of it (``apply_view``).
    """

    def __init__(self) -> None:
        self.tensors: list[dict] = []
        self.chunks: list[memoryview] = []

    def tensor(self, tensor: torch.Tensor, view: dict | None = None) -> dict:
        info = {
            "dtype": dtype_name(tensor.dtype),
            "shape": list(tensor.shape),
            "device": tensor.device.type,
            "requires_grad": bool(tensor.requires_grad),
            "nbytes": 0,
        }
        if view is not None:
            info["view"] = view
        if tensor.device.type != "meta":
            # A view of a large tensor saves a copy (6 MB: 3 ms of page faults); a small one is cheaper copied
            # (3.6 us against 11 to 18 us for the view, whose ctypes type is made per size).
            data = tensor_buffer(tensor) if tensor.nbytes >= IN_PLACE_BYTES else memoryview(tensor_bytes(tensor))
            info["nbytes"] = data.nbytes
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
        if isinstance(value, dict) and all(type(key) is str for key in value):
            return {"$dict": {key: self.value(item) for key, item in value.items()}}
        raise TypeError(f"cannot send a {type(value).__name__} to the sandbox")

    def blob(self) -> bytes:
        return b"".join(self.chunks)

    def buffers(self) -> list[memoryview]:
        """The blob in pieces, each in its tensor's own memory: ``protocol.send_frame`` writes them as
        they are (a fresh 6 MB copy cost a child 4 ms, most of it page faults)."""
        return self.chunks


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The raw bytes of a CPU tensor in row-major order, without numpy."""
    tensor = _row_major(tensor)
    if tensor.numel() == 0:
        return b""
    return ctypes.string_at(tensor.data_ptr(), tensor.nbytes)


def tensor_buffer(tensor: torch.Tensor) -> memoryview:
    """The same bytes as ``tensor_bytes``, read in place: a byte view that keeps its tensor alive."""
    tensor = _row_major(tensor)
    if tensor.numel() == 0:
        return memoryview(b"")
    memory = (ctypes.c_char * tensor.nbytes).from_address(tensor.data_ptr())
    memory.tensor = tensor  # the view holds ``memory``, which holds the tensor and so its storage
    return memoryview(memory).cast("B")


def _row_major(tensor: torch.Tensor) -> torch.Tensor:
    """A plain contiguous CPU tensor with ``tensor``'s values (bool as 0/1 bytes).

    Each step only when needed: this runs several thousand times a grading (3 us to 0.9 us)."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.to("cpu")
    if tensor.dtype == torch.bool:
        tensor = tensor.to(torch.uint8)  # bool storage is one byte per element, but normalise to 0/1
    if tensor.is_conj() or tensor.is_neg():  # lazy views: memory holds the values before them
        tensor = tensor.resolve_conj().resolve_neg()
    if not tensor.is_contiguous():
        tensor = tensor.contiguous()
    return tensor


# ---------------------------------------------------------------- JSON + blob -> values (checked)


def check_tensor_info(info: Any) -> tuple[torch.dtype, tuple[int, ...], str, bool, int]:
    """Validate one tensor description from the peer; return (dtype, shape, device, requires_grad, nbytes)."""
    if not isinstance(info, dict):
        raise ProtocolError("a tensor description is not an object")
    dtype = DTYPES.get(info.get("dtype")) if isinstance(info.get("dtype"), str) else None
    if dtype is None:
        raise ProtocolError(f"unsupported tensor dtype {str(info.get('dtype'))[:40]!r}")
    shape = info.get("shape")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMS
        or not all(type(size) is int and 0 <= size < (1 << 40) for size in shape)
    ):
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
        raise ProtocolError(
            f"a tensor of shape {shape} and dtype {dtype_name(dtype)} "
            f"should take {expected} bytes, the message says {nbytes}"
        )
    return dtype, tuple(shape), device, requires_grad, nbytes


def element_size(dtype: torch.dtype) -> int:
    return dtype.itemsize


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


def apply_view(storage: torch.Tensor, view: Any) -> torch.Tensor:
    """The view of a contiguous storage that a ``view`` describes: permute its axes (``order``), take
    every step-th entry along one axis (``window``: axis, start, step, size), expand to ``shape``."""
    try:
        order, window, shape = view["order"], view["window"], view["shape"]
        tensor = storage.permute(order) if order else storage
        if window is not None:
            axis, start, step, size = window
            index = [slice(None)] * tensor.dim()
            index[axis] = slice(start, start + step * (size - 1) + 1, step)
            tensor = tensor[tuple(index)]
        return tensor.expand(shape)
    except (KeyError, TypeError, ValueError, IndexError, RuntimeError) as error:
        raise ProtocolError(f"a tensor view is malformed ({type(error).__name__})") from None


def split_blob(infos: list, blob: bytearray) -> list[memoryview]:
    """Cut the blob into one piece per tensor, checking that the lengths add up exactly."""
    view = memoryview(blob)
    pieces, offset = [], 0
    for info in infos:
        nbytes = info["nbytes"]
        pieces.append(view[offset : offset + nbytes])
        offset += nbytes
    if offset != len(blob):
        raise ProtocolError(f"the tensors described take {offset} bytes but {len(blob)} arrived")
    return pieces
