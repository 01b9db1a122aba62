"""What a child sends back, as the judge checks it (``grader.sandbox.replies``): no sandbox needed.

Every malformed reply must become a ProtocolError (the exercise then counts as crashed), never a
tensor built from unchecked sizes, and never a crash of the judge; findings are worded by the judge.
"""

from __future__ import annotations

import json
import re
import struct

import pytest
import torch

from grader.sandbox import decode_reply
from grader.sandbox.replies import decode_dict_state
from grader.sandboxed import protocol
from grader.sandboxed.exercise_calls import dict_state, encode_output
from grader.sandboxed.tensor_codec import Encoder
from grader.student import TABLE_IN_BUFFER, CannotCheck, NotATensor, StudentError, TensorInfo, Unsendable

RETURNED_NUMPY = {"$returned": "numpy.ndarray", "values": {"$t": 0}}


def result_reply(output, tensors, inputs_after=()):
    return {"type": "result", "output": output, "tensors": tensors, "inputs_after": list(inputs_after)}


def cpu_info(shape, dtype="float32", nbytes=None):
    size = 4 if dtype == "float32" else 8
    count = 1
    for dim in shape:
        count *= dim
    return {
        "dtype": dtype,
        "shape": list(shape),
        "device": "cpu",
        "requires_grad": False,
        "nbytes": count * size if nbytes is None else nbytes,
    }


def test_a_number_beside_a_tensor_comes_back_as_that_number():
    inv_freq = torch.tensor([1.0, 0.1])
    for number in (1.25, 2, float("inf")):
        encoder = Encoder()
        output, returned = encode_output((inv_freq, number), encoder, as_info=False)
        assert returned is None  # not a finding: the spec asks for a number there
        reply = result_reply(json.loads(json.dumps(output, allow_nan=False)), encoder.tensors)
        result = decode_reply(reply, bytearray(encoder.blob()), "attention", (), 0.1)
        assert torch.equal(result.output[0], inv_freq) and result.output[1] == number and not result.notes
    encoder = Encoder()
    alone, returned = encode_output(1.25, encoder, as_info=False)
    assert returned == "float"  # a number where a tensor belongs is still reported as not a tensor


def test_a_well_formed_reply_is_decoded():
    blob = bytearray(struct.pack("<2f", 1.5, -2.0))
    reply = result_reply(
        {"$tuple": [{"$t": 0}, {"$info": {"shape": [3], "dtype": "int64", "device": "meta", "requires_grad": False}}]},
        [cpu_info([2])],
    )
    result = decode_reply(reply, blob, "attention", (), 0.1)
    assert torch.equal(result.output[0], torch.tensor([1.5, -2.0]))
    assert result.output[1] == TensorInfo((3,), "int64", "meta", False)


@pytest.mark.parametrize(
    "reply, blob",
    [
        (result_reply({"$t": 1}, [cpu_info([2])]), bytearray(8)),  # reference out of range
        (result_reply({"$t": 0}, [cpu_info([2])]), bytearray(12)),  # more bytes than described
        (result_reply({"$t": 0}, [cpu_info([4])]), bytearray(8)),  # fewer bytes than described
        (result_reply({"$t": 0}, [cpu_info([2])], [None, None]), bytearray(8)),  # wrong inputs_after count
        (result_reply("hello", []), bytearray()),  # not a tensor at all
        (result_reply({"$tuple": [{"$t": 0}] * 100}, [cpu_info([1])]), bytearray(4)),  # too many parts
        ({"type": "surprise"}, bytearray()),
        ({"type": "result", "output": {"$t": 0}}, bytearray()),  # no tensor list
    ],
)
def test_malformed_replies_are_protocol_errors(reply, blob):
    with pytest.raises(protocol.ProtocolError):
        decode_reply(reply, blob, "attention", (), 0.1)


def test_findings_are_worded_by_the_judge_never_as_the_students_exceptions():
    with pytest.raises(CannotCheck, match="no parameter \\(and no buffer\\) of shape") as caught:
        decode_reply({"type": "finding", "code": "no_table", "parameters": 0, "buffers": 0}, bytearray(), "f", (), 0.0)
    assert not isinstance(caught.value, StudentError)
    reply = {
        **result_reply(RETURNED_NUMPY, [cpu_info([2])]),
        "type": "finding",
        "code": "not_a_tensor",
        "returned": "numpy.ndarray",
    }
    result = decode_reply(reply, bytearray(struct.pack("<2f", 1.0, 2.0)), "sinusoidal_encoding", (), 0.0)
    assert isinstance(result.output, NotATensor) and result.output.returned == "numpy.ndarray"
    assert torch.equal(result.output.values, torch.tensor([1.0, 2.0]))
    assert result.notes == (
        "sinusoidal_encoding returned a numpy.ndarray, not a torch.Tensor; this test "
        "converted it to a tensor to judge its values",
    )
    noted = decode_reply(
        {**result_reply({"$t": 0}, [cpu_info([2])]), "notes": ["table_in_buffer"]},
        bytearray(8),
        "LearnedPositionalEmbedding",
        (),
        0.0,
    )
    assert noted.notes == (TABLE_IN_BUFFER,)


@pytest.mark.parametrize(
    "reply",
    [
        {"type": "finding", "code": "rm -rf"},  # unknown finding
        {"type": "finding", "code": "no_table", "parameters": "many", "buffers": 0},  # malformed count
        {**result_reply({"$t": 0}, [cpu_info([2])]), "type": "finding", "code": "not_a_tensor"},  # nothing non-tensor
        result_reply(RETURNED_NUMPY, [cpu_info([2])]),  # a non-tensor part in a plain result
        {**result_reply({"$t": 0}, [cpu_info([2])]), "notes": ["you passed"]},  # a note the judge does not know
        {**result_reply({"$returned": 3, "values": None}, []), "type": "finding", "code": "not_a_tensor"},
    ],
)
def test_malformed_findings_are_protocol_errors(reply):
    blob = bytearray(8) if reply.get("tensors") else bytearray()
    with pytest.raises(protocol.ProtocolError):
        decode_reply(reply, blob, "attention", (), 0.1)


def test_an_error_reply_is_a_student_error_with_a_clipped_message():
    with pytest.raises(StudentError) as caught:
        decode_reply({"type": "error", "kind": "ValueError", "message": "x" * 100_000}, bytearray(), "f", (), 0.0)
    assert caught.value.kind == "ValueError" and len(caught.value.message) < 2100


def test_a_dict_argument_comes_back_as_the_child_left_it():
    left = {"rope_type": "yarn", "factor": float("-inf"), 3: "a key that is not a str", "table": torch.ones(1)}
    state = json.loads(json.dumps(dict_state(left), allow_nan=False))
    assert decode_dict_state(state) == {
        "rope_type": "yarn",
        "factor": float("-inf"),
        "<int>": "a key that is not a str",
        "table": Unsendable("torch.Tensor"),
    }


@pytest.mark.parametrize(
    "dicts_after, n_dicts",
    [
        ([{}], 0),  # a dict no call sent
        ([], 1),  # the dict sent, not reported
        ([{"factor": [4.0]}], 1),  # not a plain value
        ([{"factor": {"$returned": 4}}], 1),  # a type name that is not a name
        ([{str(key): key for key in range(100)}], 1),  # more keys than a dict state holds
        (["rope_type"], 1),
    ],
)
def test_malformed_dict_states_are_protocol_errors(dicts_after, n_dicts):
    reply = {**result_reply({"$t": 0}, [cpu_info([2])]), "dicts_after": dicts_after}
    with pytest.raises(protocol.ProtocolError):
        decode_reply(reply, bytearray(8), "scaled_inv_freq", (), 0.1, n_dicts)


def test_a_numpy_scalar_beside_a_tensor_comes_back_with_its_value_and_its_type():
    import numpy as np

    inv_freq = torch.tensor([1.0, 0.1])
    encoder = Encoder()
    output, returned = encode_output((inv_freq, np.float64(1.25)), encoder, as_info=False)
    assert returned == "numpy.float64"  # not a Python float: the contract test judges that
    reply = {**result_reply(json.loads(json.dumps(output, allow_nan=False)), encoder.tensors), "type": "finding"}
    reply["code"] = "not_a_tensor"
    result = decode_reply(reply, bytearray(encoder.blob()), "scaled_inv_freq", (), 0.1)
    assert result.output[1].returned == "numpy.float64" and float(result.output[1].values) == 1.25


def test_an_input_reported_unchanged_comes_back_as_a_copy_of_what_was_sent():
    sent = (torch.tensor([1.0, -2.0]), torch.empty(3, device="meta"), torch.tensor([5, 6]))
    blob = bytearray(struct.pack("<2f", 9.0, 9.0))
    reply = {**result_reply({"$t": 0}, [cpu_info([2])]), "inputs_after": ["$unchanged", None, {"$t": 0}]}
    after = decode_reply(reply, blob, "attention", sent, 0.1).inputs_after
    assert torch.equal(after[0], sent[0]) and after[0] is not sent[0]
    assert after[1] is None and torch.equal(after[2], torch.tensor([9.0, 9.0]))
    meta_unchanged = {**reply, "inputs_after": [None, "$unchanged", {"$t": 0}]}
    with pytest.raises(protocol.ProtocolError):  # a meta tensor has no values to keep
        decode_reply(meta_unchanged, blob, "attention", sent, 0.1)


def test_each_tensor_of_a_reply_has_its_values_and_its_alignment_wherever_it_sits_in_the_blob():
    """A reply's tensors are read from its blob, in its memory when aligned; one after a 3-byte bool is not."""
    flags, values, ids = torch.tensor([True, False, True]), torch.tensor([1.5, -2.0, 3.25]), torch.tensor([7, -9])
    encoder = Encoder()
    output = {"$tuple": [encoder.value(flags), encoder.value(values), encoder.value(ids)]}
    reply = result_reply(output, encoder.tensors)
    decoded = decode_reply(reply, bytearray(encoder.blob()), "attention", (), 0.1).output
    assert [tensor.dtype for tensor in decoded] == [torch.bool, torch.float32, torch.int64]
    assert torch.equal(decoded[0], flags) and torch.equal(decoded[1], values) and torch.equal(decoded[2], ids)
    assert all(tensor.data_ptr() % tensor.element_size() == 0 for tensor in decoded)
    decoded[1].add_(1.0)  # a test may change what it got: nothing else changes with it
    assert torch.equal(decode_reply(reply, bytearray(encoder.blob()), "attention", (), 0.1).output[1], values)
