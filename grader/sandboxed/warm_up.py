"""Trusted warm-up: each kind of op the exercises use, run once before any submission's code.

The worker runs it once, so that every child inherits initialised kernels; a child forked ahead runs
it again while it waits for its submission, so that the copy-on-write faults of those first ops fall
before anyone waits, not during the grading's first calls.
"""

from __future__ import annotations

import contextlib
import gc
import math
import types

import torch

from . import tensor_codec


def warm_up(meta_kernels: bool) -> None:
    """Run each kind of op the exercises use once (see the module's docstring for who runs it, and why).

    ``meta_kernels``: the meta device's too, for the hidden tests (its first op imports sympy, half a
    second), which the public tests never use.
    """
    q = torch.randn(2, 3, 5, 8)
    weights = torch.softmax(q @ q.transpose(-2, -1) / math.sqrt(8) + torch.zeros(3, 5, 5), dim=-1)
    (weights @ q).masked_fill(torch.ones(5, 8, dtype=torch.bool).triu(), float("-inf")).sum()
    angles = torch.outer(torch.arange(4, dtype=torch.float64), torch.arange(0, 8, 2) / 8.0)
    torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).float().to(torch.bfloat16)
    torch.cat([q[..., 0::2], q[..., 1::2]], dim=-1).contiguous().to(torch.float16)
    module = torch.nn.Linear(4, 4)
    module.weight.data.copy_(torch.eye(4))
    torch.nn.Embedding(4, 4)(torch.arange(3))
    torch.view_as_real(torch.polar(torch.ones(3), torch.zeros(3)))
    tensor_codec.build_tensor(torch.float32, (2,), tensor_codec.tensor_bytes(torch.ones(2)))
    if meta_kernels:  # the first meta op imports sympy: in the worker, once, after spare_dynamo_import()
        module.to(torch.float64).to("meta")(torch.empty(2, 4, dtype=torch.float64, device="meta"))
        meta = torch.empty(2, 5, 8, device="meta")
        torch.softmax(meta @ meta.transpose(-2, -1) + torch.empty(5, 5, device="meta"), dim=-1) @ meta
        (meta[..., 0::2] * meta[..., 1::2].cos() - meta[..., 0::2].sin()).to(torch.float64)


def spare_dynamo_import() -> int:
    """Let every ``torch._disable_dynamo`` wrapper that exists now call its function directly.

    At its first call such a wrapper imports ``torch._dynamo`` (800 modules, a second of CPU in every
    worker) only to wrap the function in ``torch._dynamo.disable``, which changes nothing outside
    ``torch.compile``, and caches that on the function as ``__dynamo_disable``. The meta device's
    Python kernels go through hundreds of them: the cache is set to the function itself. A
    submission that compiles, or steps an optimizer, still imports dynamo in its own child (torch
    2.13's ``torch._compile``; a test checks that the meta device's ops import no dynamo).
    Returns how many it set."""
    from torch._compile import _disable_dynamo

    wrapper_code = _disable_dynamo(lambda: None).__code__
    if "fn" not in wrapper_code.co_freevars:  # another torch: its warm-up imports dynamo, as it did before
        return 0
    cell = wrapper_code.co_freevars.index("fn")
    found = 0
    for candidate in gc.get_objects():
        if type(candidate) is types.FunctionType and candidate.__code__ is wrapper_code:
            function = candidate.__closure__[cell].cell_contents
            with contextlib.suppress(AttributeError, TypeError):  # a builtin takes no attribute: it keeps the import
                setattr(function, "__dynamo_disable", function)
                found += 1
    return found
