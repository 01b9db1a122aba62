"""How a tensor argument reaches the student's code: with its values, as a view of a contiguous storage in
the layout real models produce (transposed, permuted, sliced with strides, broadcast).

A hidden test wraps a tensor in ``Viewed(t, layout)``; ``transposed(t, d0, d1)`` is ``u.transpose(d0, d1)`` of
a contiguous ``u``. The judge sends the storage and ``Layout.wire``; the child applies it
(``grader.sandboxed.tensor_codec.apply_view``), as ``LocalStudent`` does in process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Layout:
    """How a tensor argument sits in memory when it reaches the student: a view of a contiguous storage,
    as the tensors real models pass are (see the module docstring).

    ``order``: the view is ``storage.permute(order)`` (q.transpose(1, 2) of a [B, T, H, D] projection,
    a channels-last permute); ``window`` (axis, start, step, stored): along that axis the view takes
    every step-th of ``stored`` entries from ``start`` (q sliced from a fused qkv projection, every other
    token); ``broadcast``: axes of size 1 in the storage, expanded with stride 0 (k shared by all heads,
    position ids shared by the batch). The values must be equal along a broadcast axis (``values``).
    """

    order: tuple[int, ...] = ()
    window: tuple[int, int, int, int] | None = None
    broadcast: tuple[int, ...] = ()

    def values(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` made equal along the broadcast axes (its first entry along each), as the view shows it."""
        for axis in self.broadcast:
            tensor = tensor.narrow(axis, 0, 1).expand_as(tensor)
        return tensor.contiguous()

    def storage(self, tensor: torch.Tensor) -> torch.Tensor:
        """The contiguous storage whose view (``wire``) holds ``tensor``'s values."""
        if not torch.equal(self.values(tensor), tensor):
            raise ValueError("a broadcast layout needs values equal along its broadcast axes (Layout.values)")
        for axis in self.broadcast:
            tensor = tensor.narrow(axis, 0, 1)
        if self.window is not None:
            axis, start, step, stored = self.window
            shape = list(tensor.shape)
            shape[axis] = stored
            larger = torch.zeros(shape, dtype=tensor.dtype)
            index = [slice(None)] * tensor.dim()
            index[axis] = slice(start, start + step * (tensor.shape[axis] - 1) + 1, step)
            larger[tuple(index)] = tensor
            tensor = larger
        if self.order:
            tensor = tensor.permute([self.order.index(axis) for axis in range(len(self.order))])
        return tensor.clone(memory_format=torch.contiguous_format)  # never the caller's memory

    def wire(self, shape) -> dict:
        """The view as the receiver applies it (``tensor_codec.apply_view``)."""
        window = None
        if self.window is not None:
            axis, start, step, _ = self.window
            window = [axis % len(shape), start, step, shape[axis]]
        return {"order": list(self.order), "window": window, "shape": list(shape)}


@dataclass(frozen=True)
class Viewed:
    """Deliver ``tensor``'s values to the student in ``layout`` (a non-contiguous view)."""

    tensor: torch.Tensor
    layout: Layout


def transposed(tensor: torch.Tensor, dim0: int, dim1: int) -> Viewed:
    """``tensor`` delivered as ``u.transpose(dim0, dim1)`` of a contiguous ``u``."""
    order = list(range(tensor.dim()))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    return Viewed(tensor, Layout(order=tuple(order)))
