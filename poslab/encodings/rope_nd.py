"""RoPE beyond one dimension: axial 2D RoPE for image patches, and M-RoPE (Qwen2-VL) for text, images and video.

Axial 2D RoPE (as in Heo et al., "Rotary Position Embedding for Vision Transformer", 2024, arXiv 2403.13298):
a head of D features is cut in two halves; the first half is 1D RoPE of dimension D/2 at the patch's row, the
second at its column. Each half is a rotation, so a score sees only the offset (row_q - row_k, col_q - col_k).

M-RoPE (Wang et al., "Qwen2-VL", 2024, arXiv 2409.12191): every token has three position ids (temporal,
height, width) and the D/2 frequency pairs are cut into three sections, ``mrope_section`` (Qwen2-VL: 16, 24,
24 of 64 pairs). Pair j turns by ``positions[section(j)] * theta_j``, with the ``half`` pairing of Hugging
Face's implementation. A text token has all three ids equal, so M-RoPE reduces to 1D RoPE for text.

``mrope_positions`` lays out a sequence of text, images and videos as Qwen2-VL's ``get_rope_index`` does
(merged patch grids, no time scaling): text counts on from the largest id so far; an image's tokens all get
one temporal id and their row and column added to the start; a video's frames count the temporal id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from poslab.encodings._checks import require
from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies

QWEN2_VL_SECTIONS = (16, 24, 24)  # temporal, height, width pairs of a 128-feature head
AXES = ("temporal", "height", "width")
SegmentKind = Literal["text", "image", "video"]


def axial_rope_2d(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, base: float = 100.0) -> torch.Tensor:
    """x ``[..., T, D]`` (D a multiple of 4): the first D/2 features rotated by row, the last D/2 by column.

    Each half is interleaved 1D RoPE of dimension D/2 with frequencies ``base^(-2i/(D/2))``.
    """
    head_dim = x.shape[-1]
    require(head_dim % 4 == 0, f"2D RoPE needs D divisible by 4 (two halves of pairs), got D={head_dim}")
    half = head_dim // 2
    inv_freq = rope_inverse_frequencies(half, base, torch.float64)
    by_row = apply_rotary(x[..., :half], inv_freq, rows)
    by_col = apply_rotary(x[..., half:], inv_freq, cols)
    return torch.cat([by_row, by_col], dim=-1)


def section_of_pairs(sections: tuple[int, ...]) -> torch.Tensor:
    """``[sum(sections)]``: for each frequency pair, the axis (0 temporal, 1 height, 2 width) it follows."""
    require(len(sections) == 3 and all(s >= 0 for s in sections), f"three section sizes needed, got {sections}")
    return torch.repeat_interleave(torch.arange(3), torch.tensor(sections))


def apply_mrope(
    x: torch.Tensor, positions: torch.Tensor, sections: tuple[int, ...] = QWEN2_VL_SECTIONS, base: float = 10000.0
) -> torch.Tensor:
    """M-RoPE: x ``[..., T, D]``, positions ``[3, T]`` (temporal, height, width); ``half`` pairing.

    Pair j (features j and j + D/2) turns by ``positions[axis(j), t] * base^(-2j/D)``; ``sum(sections)``
    must be D/2. The angles are computed in float64; the result has x's dtype.
    """
    head_dim = x.shape[-1]
    require(sum(sections) * 2 == head_dim, f"sections {sections} must add up to D/2 = {head_dim // 2}")
    require(
        positions.shape == (3, x.shape[-2]), f"positions must be [3, T={x.shape[-2]}], got {tuple(positions.shape)}"
    )
    inv_freq = rope_inverse_frequencies(head_dim, base, torch.float64)
    chosen = positions.to(torch.float64)[section_of_pairs(sections)]  # [D/2, T]: each pair's own axis
    angles = chosen.T * inv_freq  # [T, D/2]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = angles.cos().to(work), angles.sin().to(work)
    first, second = x.to(work)[..., : head_dim // 2], x.to(work)[..., head_dim // 2 :]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1).to(x.dtype)


@dataclass(frozen=True)
class Segment:
    kind: SegmentKind
    frames: int = 1  # video only
    height: int = 1  # merged patch rows (image, video)
    width: int = 1  # merged patch columns; for text, the number of tokens

    @property
    def tokens(self) -> int:
        return self.width if self.kind == "text" else self.frames * self.height * self.width


def mrope_positions(segments: tuple[Segment, ...]) -> tuple[torch.Tensor, list[str]]:
    """``([3, T] position ids, [T] segment labels)`` for a sequence of text, image and video segments."""
    parts, labels, start = [], [], 0
    for index, segment in enumerate(segments):
        if segment.kind == "text":
            ids = torch.arange(segment.width).expand(3, -1) + start
        else:
            require(segment.kind in ("image", "video"), f"unknown segment kind {segment.kind!r}")
            frames = segment.frames if segment.kind == "video" else 1
            t, h, w = torch.meshgrid(
                torch.arange(frames), torch.arange(segment.height), torch.arange(segment.width), indexing="ij"
            )
            ids = torch.stack([t.flatten(), h.flatten(), w.flatten()]) + start
        parts.append(ids)
        labels += [f"{index + 1}. {segment.kind}"] * ids.shape[1]
        start = int(ids.max()) + 1  # the next segment continues after the largest id so far
    return torch.cat(parts, dim=1), labels


def grid_positions(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows, cols)``, each ``[height * width]``, of a patch grid in raster order."""
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return rows.flatten(), cols.flatten()
