"""The exercise-specific part of a call: building its arguments, running the op, encoding its output.

The ops and their meaning are documented in ``grader.student`` (the judge's side of the contract).
Which submitted name an op calls comes from the judge, in the ``load`` message; this module knows
only the ops that do more than call a function (``learned.parameters``, ``learned.buffers`` and
``learned.forward``). What the grader finds while making a call is a ``Finding`` (sent as a
``finding`` frame) or a note code, never an exception of the submission's (see ``protocol``).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from . import protocol, tensor_codec
from .protocol import FindingCode, NoteCode

# The ops this side does more than call a function for. The judge names them too, from the exercise
# table (``grader.student.ops_of``); a test checks that the two lists agree.
LEARNED_PARAMETERS, LEARNED_BUFFERS, LEARNED_FORWARD = "learned.parameters", "learned.buffers", "learned.forward"
LEARNED_OPS = (LEARNED_PARAMETERS, LEARNED_BUFFERS, LEARNED_FORWARD)
# Ops whose output is described (shape, dtype, device), never sent as values.
DESCRIBED_OPS = (LEARNED_PARAMETERS, LEARNED_BUFFERS)


class Finding(Exception):
    """The grader's own finding while making a call (never an exception of the submission's code):
    ``code`` and plain details travel to the judge in a ``finding`` frame, which words them."""

    def __init__(self, code: FindingCode, **details: Any) -> None:
        super().__init__(code)
        self.code = code
        self.details = details


def run_op(op: str, target: Any, args: list | tuple, kwargs: dict, notes: list | None = None) -> Any:
    """Run the op; ``notes`` collects the codes of what the grader worked around (``NoteCode``).

    Every call starts from the same random state, so a submission that draws random numbers (a
    module's starting table) answers the same call the same way in every grading."""
    torch.random.default_generator.manual_seed(0)  # the CPU generator alone: torch.manual_seed costs 0.3 ms
    if kwargs.get("device") == "meta" or any(
        isinstance(value, torch.Tensor) and value.device.type == "meta" for value in (*args, *kwargs.values())
    ):
        with GpuDeviceChecks():
            return _run(op, target, args, kwargs, notes)
    return _run(op, target, args, kwargs, notes)


def _run(op: str, target: Any, args: list | tuple, kwargs: dict, notes: list | None) -> Any:
    if op == LEARNED_PARAMETERS:
        return tuple(target(max_len=kwargs["max_len"], d_model=kwargs["d_model"]).parameters())
    if op == LEARNED_BUFFERS:
        return tuple(target(max_len=kwargs["max_len"], d_model=kwargs["d_model"]).buffers())
    if op == LEARNED_FORWARD:
        return learned_forward(target, notes if notes is not None else [], **kwargs)
    return target(*args, **kwargs)


# Ops a GPU runs with index tensors left on the CPU (advanced indexing), or that copy across devices.
CROSS_DEVICE_OPS = frozenset(
    ("index", "index_put", "index_put_", "_index_put_impl_", "copy_", "_to_copy", "to", "_copy_from")
)


class GpuDeviceChecks(TorchDispatchMode):
    """On the meta device, the check a GPU makes of every op: its tensors on one device (a 0-dim CPU
    tensor aside, which a GPU takes as a number). The meta kernels of some ops (embedding, index_select,
    mm, gather) skip it, so a helper tensor left on the CPU passed there and fails on a GPU."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.overloadpacket.__name__ not in CROSS_DEVICE_OPS:
            devices = {
                tensor.device.type
                for tensor in tree_leaves((args, kwargs))
                if isinstance(tensor, torch.Tensor) and not (tensor.dim() == 0 and tensor.device.type == "cpu")
            }
            if len(devices) > 1:
                first, second = sorted(devices)
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but found at least two devices, {first} and "
                    f"{second} (in {func.overloadpacket.__name__}; a GPU raises this, the meta device alone does not)"
                )
        return func(*args, **kwargs)


def learned_forward(cls, notes: list, max_len, d_model, x, table=None, dtype=None, device=None, upstream=None):
    module = cls(max_len=max_len, d_model=d_model)
    if table is not None:
        with torch.no_grad():
            module_table(module, (max_len, d_model), notes).copy_(table)
    if dtype is not None:
        module = module.to(protocol.DTYPES[dtype])
    if device is not None:
        module = module.to(device)
    if upstream is None:
        return module(x)
    # Forward's graph back to the table, whether or not the table is registered as trainable (that is
    # "one trainable table"'s business): the table is watched for this one call.
    watched = module_table(module, (max_len, d_model), notes).requires_grad_(True)
    out = module(x)
    if not (isinstance(out, torch.Tensor) and out.requires_grad and out.shape == upstream.shape):
        return out, None
    (gradient,) = torch.autograd.grad((out * upstream).sum(), [watched], allow_unused=True)
    return out, gradient


def module_table(module: Any, shape: tuple[int, int], notes: list) -> torch.Tensor:
    """The module's one parameter of ``shape`` or, with none, its one buffer of that shape (noted: a table
    kept as a buffer is a mistake of its own, "one trainable table", and the other tests still judge the
    forward with it); with neither, or several, a ``NO_TABLE`` finding."""
    parameters = [p for p in module.parameters() if tuple(p.shape) == shape]
    buffers = [b for b in module.buffers() if tuple(b.shape) == shape]
    tables = parameters if parameters else buffers
    if len(tables) != 1:
        raise Finding(FindingCode.NO_TABLE, parameters=len(parameters), buffers=len(buffers))
    if not parameters:
        notes.append(NoteCode.TABLE_IN_BUFFER)
    return tables[0]


def type_name(value: Any) -> str:
    """``numpy.ndarray``, ``list``, ``None``: how a message names the type of a returned value."""
    if value is None:
        return "None"
    kind = type(value)
    module = kind.__module__.split(".")[0]
    return kind.__name__ if module == "builtins" else f"{module}.{kind.__name__}"


def _plain_numbers(value: Any, depth: int = 0) -> bool:
    """Nested lists/tuples of Python numbers (no student-defined types: converting runs no student code)."""
    if type(value) in (int, float, bool):
        return True
    return (
        type(value) in (list, tuple)
        and depth < protocol.MAX_DIMS
        and all(_plain_numbers(item, depth + 1) for item in value)
    )


def converted(value: Any) -> torch.Tensor | None:
    """A non-tensor output's values as a tensor, when it is a numpy array or scalar of numbers (a
    scalar as a 0-d tensor) or a list of numbers; None otherwise."""
    try:
        if type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.dtype.kind in "biuf":
            return torch.from_numpy(value.copy()) if type(value).__name__ == "ndarray" else torch.tensor(value.item())
        if type(value) in (list, tuple) and _plain_numbers(value):
            return torch.tensor(value)
    except Exception:  # noqa: BLE001 - ragged lists and the like simply do not convert
        return None
    return None


PLAIN_NUMBERS = (int, float, bool)  # exact types: a subclass could run the submission's code when encoded
MAX_DICT_KEYS = 64


def dict_state(given: dict) -> dict:
    """A dict argument as it stands after a call, as plain JSON: each key with its value, where a key
    that is not a str, or a value not of an exact plain type, travels as ``{"$returned": type name}``
    (naming a type runs none of the submission's code). Non-finite floats travel as ``{"$f": repr}``."""
    state = {}
    for key, value in list(given.items())[:MAX_DICT_KEYS]:
        name = key if type(key) is str else f"<{type_name(key)}>"
        if value is None or type(value) in (str, int, bool):
            state[name] = value
        elif type(value) is float:
            state[name] = value if math.isfinite(value) else {"$f": repr(value)}
        else:
            state[name] = {"$returned": type_name(value)}
    return state


def encode_output(output: Any, encoder: tensor_codec.Encoder, as_info: bool) -> tuple[Any, str | None]:
    """The output as JSON plus tensors, and the type name of what was not a tensor (None if all were).

    A non-tensor leaf travels as ``{"$returned": type name, "values": tensor ref or null}``.
    """
    returned: list[str] = []

    def one(item: Any, in_tuple: bool = False) -> Any:
        if in_tuple and type(item) in PLAIN_NUMBERS:  # (inv_freq, attention_factor): a number is an answer
            return encoder.value(item)
        if isinstance(item, torch.Tensor):
            if as_info or item.device.type == "meta":
                return {
                    "$info": {
                        "shape": list(item.shape),
                        "dtype": protocol.dtype_name(item.dtype),
                        "device": item.device.type,
                        "requires_grad": bool(item.requires_grad),
                    }
                }
            return encoder.tensor(item)
        returned.append(type_name(item))
        values = converted(item)
        return {"$returned": type_name(item), "values": None if values is None else one(values)}

    if isinstance(output, torch.Tensor):
        encoded = one(output)
    elif (
        type(output) in (tuple, list)
        and 0 < len(output) <= protocol.MAX_PARTS
        and any(isinstance(item, torch.Tensor) for item in output)
    ):
        encoded = {"$tuple": [one(item, in_tuple=True) for item in output]}
    elif type(output) is tuple and (as_info or not output):  # parameters()/buffers(): maybe none
        encoded = {"$tuple": [one(item) for item in output[: protocol.MAX_PARTS]]}
    else:
        encoded = one(output)
    return encoded, (returned[0] if returned else None)


class Decoder:
    """Builds the call's arguments from the judge's frame (trusted input) and keeps every tensor."""

    def __init__(self, infos: list, blob: bytearray) -> None:
        self.infos = infos
        self.pieces = tensor_codec.split_blob(infos, blob)
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
        if "$dict" in item:
            return {str(key): self.value(entry) for key, entry in item["$dict"].items()}
        if "$f" in item:
            return float(item["$f"])
        if "$dtype" in item:
            return protocol.DTYPES[item["$dtype"]]
        raise ValueError(f"unknown value {item!r}")

    def tensor(self, index: int) -> torch.Tensor:
        info = self.infos[index]
        dtype, shape, device, requires_grad, _ = tensor_codec.check_tensor_info(info)
        if device == "meta":
            self.has_meta = True
            tensor = torch.empty(shape, dtype=dtype, device="meta")
        else:
            tensor = tensor_codec.build_tensor(dtype, shape, self.pieces[index])
        if "view" in info:
            tensor = tensor_codec.apply_view(tensor, info["view"])
        if requires_grad:
            tensor.requires_grad_(True)
        return tensor
