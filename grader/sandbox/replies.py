"""Checking what a child sends back, field by field, before any tensor is built.

A reply's header is JSON; its tensors are raw bytes whose dtype (from a fixed list), shape and
byte count are checked against the header (``tensor_codec.check_tensor_info``, ``split_blob``) and
only then read with ``torch.frombuffer`` (in the frame's own buffer when aligned). Every reference must point at a
tensor of this reply, texts are clipped, and anything malformed is a ``protocol.ProtocolError``
(the exercise then counts as crashed). Nothing is unpickled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from grader.argument_layout import Viewed
from grader.sandboxed import protocol, tensor_codec
from grader.sandboxed.exercise_calls import MAX_DICT_KEYS
from grader.sandboxed.protocol import FindingCode, MessageKind, NoteCode
from grader.student import (
    TABLE_IN_BUFFER,
    CallResult,
    CannotCheck,
    NotATensor,
    NotImplementedBySubmission,
    StudentError,
    TensorInfo,
    Unsendable,
    converted_note,
    no_table_reason,
)

# The judge's words for the child's note codes, one for each (a test checks that none is missing).
NOTE_SENTENCES = {NoteCode.TABLE_IN_BUFFER: TABLE_IN_BUFFER}


def _count(reply: dict, key: str) -> int:
    value = reply.get(key)
    if type(value) is not int or not 0 <= value < 1 << 20:
        raise protocol.ProtocolError(f"a finding has a malformed {key!r}")
    return value


def decode_reply(
    reply: dict, blob: bytearray, name: str, inputs: Sequence[torch.Tensor], wall: float, n_dicts: int = 0
) -> CallResult:
    """The child's answer to a call; ``inputs``: the call's tensor arguments, as the judge sent their values."""
    kind = reply["type"]
    if kind == MessageKind.NOT_IMPLEMENTED:
        raise NotImplementedBySubmission(name)
    if kind == MessageKind.ERROR:
        raise StudentError(protocol.clip(reply.get("kind"), 100), protocol.clip(reply.get("message")))
    if kind == MessageKind.FINDING and reply.get("code") == FindingCode.NO_TABLE:
        raise CannotCheck(no_table_reason(_count(reply, "buffers"), _count(reply, "parameters")))
    if kind == MessageKind.FINDING and reply.get("code") != FindingCode.NOT_A_TENSOR:
        raise protocol.ProtocolError(f"unknown finding {protocol.clip(reply.get('code'), 40)!r}")
    if kind not in (MessageKind.RESULT, MessageKind.FINDING):
        raise protocol.ProtocolError(f"unexpected reply {protocol.clip(kind, 40)!r}")
    notes = reply.get("notes", [])
    if not isinstance(notes, list) or len(notes) > 8 or not all(note in NOTE_SENTENCES for note in notes):
        raise protocol.ProtocolError("the reply's notes are malformed")
    infos = reply.get("tensors")
    if not isinstance(infos, list):
        raise protocol.ProtocolError("the reply has no tensor list")
    checked = [tensor_codec.check_tensor_info(info) for info in infos]
    pieces = tensor_codec.split_blob(infos, blob)
    tensors = [decode_tensor(fields, piece) for fields, piece in zip(checked, pieces)]
    output = decode_output(reply.get("output"), tensors)
    after = reply.get("inputs_after")
    if not isinstance(after, list) or len(after) != len(inputs):
        raise protocol.ProtocolError("the reply does not report each input tensor once")
    inputs_after = tuple(input_after(item, sent, tensors) for item, sent in zip(after, inputs))
    dicts = reply.get("dicts_after", [])
    if not isinstance(dicts, list) or len(dicts) != n_dicts:
        raise protocol.ProtocolError("the reply does not report each dict argument once")
    dicts_after = tuple(decode_dict_state(state) for state in dicts)
    sentences = [NOTE_SENTENCES[note] for note in notes]
    parts = output if isinstance(output, tuple) else (output,)
    not_tensors = [part for part in parts if isinstance(part, NotATensor)]
    if (kind == MessageKind.FINDING) != bool(not_tensors):
        raise protocol.ProtocolError("a not_a_tensor finding does not match its output")
    sentences += [converted_note(name, part) for part in not_tensors if part.values is not None]
    return CallResult(output, inputs_after, wall, tuple(sentences), dicts_after)


class JudgeEncoder(tensor_codec.Encoder):
    """``tensor_codec.Encoder`` plus the judge-only wrappers from ``grader.student``."""

    def value(self, value: Any) -> Any:
        if isinstance(value, Viewed):
            layout = value.layout
            return self.tensor(layout.storage(value.tensor), view=layout.wire(value.tensor.shape))
        if isinstance(value, tuple):
            return {"$tuple": [self.value(item) for item in value]}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return super().value(value)


def decode_tensor(fields: tuple, piece: memoryview) -> torch.Tensor | TensorInfo:
    dtype, shape, device, requires_grad, _ = fields
    if device == "meta":
        return TensorInfo(shape, protocol.dtype_name(dtype), "meta", requires_grad)
    if len(piece) and dtype != torch.bool and not dtype.is_complex:  # (those two are rebuilt: build_tensor)
        # In the reply's own memory (a bytearray per frame that only this reply holds) when it is aligned:
        # the copy into fresh pages cost 2.5 ms for a 5 MB output.
        shared = torch.frombuffer(piece, dtype=dtype)
        if shared.data_ptr() % dtype.itemsize == 0:
            return shared.reshape(shape)
    return tensor_codec.build_tensor(dtype, shape, piece)  # detached, like LocalStudent's outputs


def input_after(item: Any, sent: torch.Tensor, tensors: list) -> torch.Tensor | None:
    """A tensor argument after the call: None (meta), a copy of what was sent (unchanged), or the reply's tensor."""
    if item is None:
        return None
    if item == protocol.UNCHANGED_INPUT and sent.device.type != "meta":
        return sent.detach().clone()
    return tensor_ref(item, tensors)


def tensor_ref(item: Any, tensors: list) -> torch.Tensor:
    if (
        not isinstance(item, dict)
        or set(item) != {"$t"}
        or type(item["$t"]) is not int
        or not 0 <= item["$t"] < len(tensors)
        or not isinstance(tensors[item["$t"]], torch.Tensor)
    ):
        raise protocol.ProtocolError("a tensor reference is malformed")
    return tensors[item["$t"]]


def decode_info(item: Any) -> TensorInfo:
    fields = dict(item) if isinstance(item, dict) else None
    if fields is None or set(fields) != {"shape", "dtype", "device", "requires_grad"}:
        raise protocol.ProtocolError("a tensor description is malformed")
    fields["nbytes"] = 0
    fields["device"] = fields["device"] if fields["device"] in ("cpu", "meta") else "?"
    dtype, shape, device, requires_grad, _ = tensor_codec.check_tensor_info({**fields, "device": "meta"})
    return TensorInfo(shape, protocol.dtype_name(dtype), item["device"], requires_grad)


def decode_number(entry: Any) -> float | int | bool | None:
    """A plain number of an output tuple (a non-finite float comes as ``{"$f": "inf"}``); None if it is not one."""
    if type(entry) in (int, float, bool):
        return entry
    if isinstance(entry, dict) and set(entry) == {"$f"} and entry["$f"] in ("nan", "inf", "-inf"):
        return float(entry["$f"])
    return None


def decode_dict_state(state: Any) -> dict:
    """A dict argument after the call (``exercise_calls.dict_state``): str keys, plain values, non-finite
    floats as ``{"$f": ...}``, anything else as ``{"$returned": type name}`` (an ``Unsendable``)."""
    if not isinstance(state, dict) or len(state) > MAX_DICT_KEYS:
        raise protocol.ProtocolError("a dict argument's state is malformed")

    def value(entry: Any) -> Any:
        if entry is None or type(entry) in (str, int, float, bool):
            return protocol.clip(entry, 200) if type(entry) is str else entry
        if isinstance(entry, dict) and set(entry) == {"$returned"} and isinstance(entry["$returned"], str):
            return Unsendable(protocol.clip(entry["$returned"], 80))
        number = decode_number(entry)
        if number is None:
            raise protocol.ProtocolError("a dict argument holds a malformed value")
        return number

    return {protocol.clip(key, 200): value(entry) for key, entry in state.items()}


def decode_output(item: Any, tensors: list) -> Any:
    def one(entry: Any, values_of: bool = False, in_tuple: bool = False) -> Any:
        if in_tuple and decode_number(entry) is not None:
            return decode_number(entry)
        if isinstance(entry, dict) and "$info" in entry and len(entry) == 1:
            return decode_info(entry["$info"])
        if not values_of and isinstance(entry, dict) and set(entry) == {"$returned", "values"}:
            if not isinstance(entry["$returned"], str):
                raise protocol.ProtocolError("a returned type is not a name")
            values = None if entry["values"] is None else one(entry["values"], values_of=True)
            return NotATensor(protocol.clip(entry["$returned"], 80), values)
        return tensor_ref(entry, tensors)

    if isinstance(item, dict) and set(item) == {"$tuple"} and isinstance(item["$tuple"], list):
        if len(item["$tuple"]) > protocol.MAX_PARTS:
            raise protocol.ProtocolError("the output has too many parts")
        return tuple(one(entry, in_tuple=True) for entry in item["$tuple"])
    return one(item)


def check_import_error(error: Any) -> dict:
    if not isinstance(error, dict):
        return {"kind": "Error", "message": "the import failed", "line": None, "module": ""}
    line = error.get("line")
    return {
        "kind": protocol.clip(error.get("kind"), 100),
        "message": protocol.clip(error.get("message"), 500),
        "line": line if type(line) is int else None,
        "module": protocol.clip(error.get("module", ""), 100),
    }


def explain_end(ended: str) -> str:
    if "SIGXCPU" in ended:
        return "it ran out of CPU time"
    if "SIGKILL" in ended:
        return "it was killed, for instance for using too much memory"
    if "exited" in ended:
        return f"it {ended}, for instance through os._exit()"
    return ended or "it ended"
