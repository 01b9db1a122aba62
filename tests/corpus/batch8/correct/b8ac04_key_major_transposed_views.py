# style: key-major (transposed) computation, softmax over dim=-2, returns non-contiguous .mT views
from __future__ import annotations

import math

import torch


def _as_matrix(bias: torch.Tensor) -> torch.Tensor:
    """A 0-d or 1-d bias gets leading 1s so that .mT is defined; broadcasting is unchanged."""
    return bias.reshape((1,) * max(0, 2 - bias.dim()) + tuple(bias.shape))


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    scale = 1 / math.sqrt(q.size(-1))
    biasT = 0.0 if bias is None else _as_matrix(bias).to(q.dtype).mT
    sT = (k @ q.mT) * scale + biasT  # [..., Tk, Tq]: one column per query
    wT = torch.softmax(sT, dim=-2)  # normalise each query's column over the keys
    outT = v.mT @ wT  # [..., Dv, Tq]
    return outT.mT, wT.mT
