"""The exercise-specific part of a call: building its arguments, running the op, encoding its output.

The ops and their meaning are documented in ``grader.student`` (the judge's side of the contract).
Which submitted name an op calls comes from the judge, in the ``load`` message; this module knows
only the two ops that do more than call a function: ``learned.parameters`` and ``learned.forward``.
"""

from __future__ import annotations

from typing import Any

import torch

from . import protocol

# Ops whose output is described (shape, dtype, device), never sent as values.
DESCRIBED_OPS = ("learned.parameters",)


def run_op(op: str, target: Any, args: list | tuple, kwargs: dict) -> Any:
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
    # The contract's wording (grader.student), the same as LocalStudent's.
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
