"""The sinusoidal positional encoding of "Attention Is All You Need" (section 3.5).

    sinusoidal_encoding(seq_len, d_model, base=10000.0) -> table [seq_len, d_model], float32

    w_i = base^(-2i / d_model)          i = 0 .. d_model/2 - 1   (d_model is even)
    table[p, 2i]   = sin(p * w_i)
    table[p, 2i+1] = cos(p * w_i)        positions p = 0 .. seq_len - 1

Accepted layouts (both use the same w_i; nothing else is accepted):
- interleaved, as above: sin in the even columns, cos in the odd ones;
- concatenated: columns 0 .. d/2 - 1 hold sin(p * w_i), columns d/2 .. d - 1 hold cos(p * w_i).

Rules:
- Positions start at 0. The base argument sets the frequencies.
- The table is float32, finite and has distinct rows even for 100,000 positions: compute the
  angles in float32 or float64, never float16.
- Vectorised: no Python loop over positions.
"""

from __future__ import annotations

import torch


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    raise NotImplementedError("sinusoidal_encoding is not implemented yet")
