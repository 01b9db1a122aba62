"""The input domain of decode (see ``domains``): one ``DecodeCase`` is one point of the spec's domain.

Sizes (batch and heads 1 to 3, D even from 2 to 32), prompts of 1 to 160 tokens and up to 8
decoded after them, no window or any window from 1 to beyond T, both cache modes and pairings, no
attention mask or a left-padded one (1/0 of either integer dtype, or True/False), positions counted
or given (from 0 to 30,000 on, in steps of 1 to 5, with gaps, or in any order with repeats; int64 or
int32), any base > 1, float32 and float64, magnitudes from 1e-3 to 30 for q and k and from 1e-3 to 1e3
for v. The number of decoded tokens is bounded because a step is one Python iteration of every correct
decoder: the prefill covers long prompts, and a few steps after it show what a step does.

A few draws seldom land on the boundaries a windowed decoder gets wrong, so ``window_edges`` gives one
case for each of them, every time: the prompt shorter than, as long as, one longer than and longer
than the window, each with no token, one token or a few decoded after it (``WINDOW_EDGES``), crossed
with every kind of positions and with left padding.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import torch
from hypothesis import strategies as st

from grader.suite.domains import MAGNITUDES, SEEDS, bases, shape_text, sizes

PAIRINGS = ("interleaved", "half")
CACHE_MODES = ("rotated", "raw")
MASK_DTYPES = ("int64", "int32", "bool")
POSITION_KINDS = ("counted", "given", "far", "stepped")
FAR_STARTS = (0, 1, 100, 700, 2048, 30000)
PROMPT_VS_WINDOW = ("shorter", "equal", "one longer", "longer")  # P against W
DECODED = ("none", "one", "few")  # T - P: 0, 1, 2 to MOST_STEPS
WINDOW_EDGES = tuple(itertools.product(PROMPT_VS_WINDOW, DECODED))
MAX_ENTRIES = 1 << 12  # of q, k or v in one case
LONGEST_PROMPT, MOST_STEPS = 160, 8


@dataclass(frozen=True)
class DecodeCase:
    batch: int = 2
    heads: int = 2
    length: int = 8  # T
    dim: int = 8  # D, even
    prompt_len: int = 3  # P, 1 <= P <= T
    cache: str = "rotated"
    window: int | None = None
    pads: tuple[int, ...] | None = None  # left padding of each row's prompt; None: no attention_mask
    mask_dtype: str = "int64"  # of the attention_mask: 1/0 as int64 or int32, or True/False
    position_ids: bool = False  # give position_ids (padding at pad_id, 1 as Hugging Face's generate does)
    start: int = 0  # the position of each row's first real token (given through position_ids)
    stride: int = 1  # positions start, start + stride, ... (given through position_ids when not 1)
    spread: bool = False  # positions drawn at random from start .. start + 4 T: gaps, any order, repeats
    ids_dtype: str = "int64"
    pad_id: int = 1
    pairing: str = "half"
    base: float | None = None  # None: leave the default
    dtype: torch.dtype = torch.float32
    scale: float = 1.0  # of q and k
    value_scale: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        """The spec's domain: a point outside it is a mistake of the suite, said at once."""
        pads = self.pads or (0,) * self.batch
        if not (
            self.batch >= 1
            and self.heads >= 1
            and self.dim >= 2
            and self.dim % 2 == 0
            and 1 <= self.prompt_len <= self.length
            and (self.window is None or self.window >= 1)
            and len(pads) == self.batch
            and all(0 <= pad < self.prompt_len for pad in pads)
            and self.cache in CACHE_MODES
            and self.pairing in PAIRINGS
            and self.stride >= 1
            and self.start >= 0
            and self.mask_dtype in MASK_DTYPES
            and self.ids_dtype in ("int64", "int32")
            and self.dtype in (torch.float32, torch.float64)
        ):
            raise ValueError(f"{self} is outside decode's spec")

    @property
    def spelled(self) -> bool:
        """Whether cache, window and pairing are passed at their defaults too: the cases of odd seed leave
        them out (told apart by the seed, so no new draw moves the other drawn cases)."""
        return self.seed % 2 == 0

    @property
    def cached_slots(self) -> int:
        return self.length if self.window is None else min(self.window, self.length)

    @property
    def gives_positions(self) -> bool:
        return self.position_ids or self.start != 0 or self.stride != 1 or self.spread

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of each tensor argument (``layouts.laid_cases``): q, k
        and v over the batch, k and v over the heads they serve (grouped-query attention), position ids over
        the batch when every row has the same."""
        shape = (self.batch, self.heads, self.length, self.dim)
        specs = [("q", shape, (0,)), ("k", shape, (0, 1)), ("v", shape, (0, 1))]
        if self.pads is not None:
            specs.append(("attention_mask", (self.batch, self.prompt_len), ()))
        if self.gives_positions:
            specs.append(("position_ids", (self.batch, self.length), () if self.pads or self.spread else (0,)))
        return specs

    def describe(self) -> str:
        text = (
            f"q, k, v {shape_text([self.batch, self.heads, self.length, self.dim])}, "
            f"{str(self.dtype).removeprefix('torch.')}, prompt_len={self.prompt_len}, cache='{self.cache}', "
            f"pairing='{self.pairing}'"
        )
        if self.window is not None:
            text += f", window={self.window}"
        if self.pads is not None:
            text += f", left padding {list(self.pads)}"
        if self.gives_positions:
            text += ", position_ids given"
        return text + ("" if self.base is None else f", base={self.base:g}")


@st.composite
def decode_domain(
    draw,
    cache: str | None = None,
    windowed: bool | None = None,
    padded: bool | None = None,
    positions: tuple[str, ...] = POSITION_KINDS,
    min_steps: int = 0,
    edge: tuple[str, str] | None = None,
) -> DecodeCase:
    """Any point of the domain; a keyword fixes one dimension (True: always, False: never, None: either).

    ``positions``, the kinds to draw from: "counted" (no position_ids), "given" (position_ids equal to the
    count, as Hugging Face's generate passes them), "far" (position_ids from far out, with gaps or in any order),
    "stepped" (position_ids that step by 2 to 5). ``edge``, one of ``WINDOW_EDGES``: a windowed case on that
    boundary of (P, T, W), small.
    """
    if edge is not None:
        prompt_len, length, window = draw(_edge_sizes(*edge))
        padded = (draw(st.booleans()) if padded is None else padded) and prompt_len >= 2
        batch, heads, dim = draw(sizes(2 if padded else 1, 2)), draw(sizes(1, 2)), 2 * draw(sizes(1, 8))
    else:
        padded = draw(st.booleans()) if padded is None else padded
        batch, heads, dim = draw(sizes(2 if padded else 1, 3)), draw(sizes(1, 3)), 2 * draw(sizes(1, 16, 4))
        room = min(LONGEST_PROMPT + MOST_STEPS, MAX_ENTRIES // (batch * heads * dim))
        longest = max(2, room - min_steps)
        prompt_len = draw(sizes(2 if padded else 1, longest, min(6, longest)))
        steps = draw(sizes(min_steps, max(min_steps, min(MOST_STEPS, room - prompt_len))))
        length = prompt_len + steps
        windowed = draw(st.booleans()) if windowed is None else windowed
        window = draw(sizes(1, length + 3, 2, length)) if windowed else None
    pads = None
    if padded:
        pads = tuple(draw(st.lists(st.integers(0, prompt_len - 1), min_size=batch, max_size=batch)))
        pads = pads if any(pads) else (*pads[:-1], draw(st.integers(1, prompt_len - 1)))
    positions = draw(st.sampled_from(positions))
    start, stride, spread = 0, 1, False
    if positions == "far":
        start, stride, spread = draw(st.sampled_from(FAR_STARTS)), draw(sizes(1, 3)), draw(st.booleans())
    if positions == "stepped":
        start, stride = draw(st.sampled_from(FAR_STARTS)), draw(sizes(2, 5))
    return DecodeCase(
        batch,
        heads,
        length,
        dim,
        prompt_len,
        cache or draw(st.sampled_from(CACHE_MODES)),
        window,
        pads,
        draw(st.sampled_from(MASK_DTYPES)),
        positions != "counted",
        start,
        stride,
        spread,
        draw(st.sampled_from(["int64", "int32"])),
        draw(st.sampled_from([1, 0, 7])),
        draw(st.sampled_from(PAIRINGS)),
        draw(bases()),
        draw(st.sampled_from([torch.float32, torch.float64])),
        draw(st.sampled_from([1.0, 1e-3, 0.1, 4.0, 30.0])),
        draw(MAGNITUDES),
        draw(SEEDS),
    )


@st.composite
def _edge_sizes(draw, prompt_vs_window: str, decoded: str) -> tuple[int, int, int]:
    """(P, T, W) on one boundary (``WINDOW_EDGES``). W = 1 only with P = W: a token that sees itself alone has
    the same out at any position, so elsewhere it would hide every mistake of positions."""
    window = draw(sizes(1 if prompt_vs_window == "equal" else 2, 8))
    if prompt_vs_window == "shorter":
        prompt_len = draw(st.integers(1, window - 1))
    elif prompt_vs_window == "longer":
        prompt_len = window + draw(sizes(2, 12))
    else:
        prompt_len = window + (prompt_vs_window == "one longer")
    steps = draw(sizes(2, MOST_STEPS)) if decoded == "few" else {"none": 0, "one": 1}[decoded]
    return prompt_len, prompt_len + steps, window


def window_edges(**fixed) -> st.SearchStrategy:
    """One case on every boundary of ``WINDOW_EDGES``, in both cache modes (a tuple of cases, for
    ``draw.for_each(edges=...)``). Every kind of positions and left padding each take their turn across the
    boundaries (``fixed`` fixes other dimensions, as in ``decode_domain``)."""

    def both_modes(case: DecodeCase) -> tuple[DecodeCase, DecodeCase]:
        return case, replace(case, cache="raw")

    def turn(edge: tuple[str, str]) -> st.SearchStrategy:  # a Latin square: each kind meets every P and T - P
        across, down = PROMPT_VS_WINDOW.index(edge[0]), DECODED.index(edge[1])
        kind = POSITION_KINDS[(across + down) % len(POSITION_KINDS)]
        return decode_domain(
            cache="rotated", windowed=True, edge=edge, padded=across % 2 == 1, positions=(kind,), **fixed
        )

    turns = [turn(edge) for edge in WINDOW_EDGES]
    return st.tuples(*turns).map(lambda cases: tuple(mode for case in cases for mode in both_modes(case)))
