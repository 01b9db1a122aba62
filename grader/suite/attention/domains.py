"""The attention exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import torch
from hypothesis import strategies as st

from grader.suite.domains import DTYPES, LEADING, MAGNITUDES, SEEDS, seeded, shape_text, sizes
from grader.suite.inputs import generator


class BiasKind(StrEnum):
    """The bias an attention case draws."""

    NONE = "none"  # no bias argument
    FINITE = "finite"  # finite values
    MASKED = "masked"  # some -inf, never a whole row


@dataclass(frozen=True)
class AttentionCase:
    lead: tuple[int, ...]
    queries: int
    keys: int
    dim: int
    value_dim: int
    dtype: str
    scale: float  # of q and k: the logits are about scale^2 sqrt(D)
    value_scale: float
    bias: BiasKind
    bias_drop: int  # leading axes the bias leaves out
    bias_ones: tuple[bool, ...]  # which of its axes are 1 (broadcast)
    seed: int
    mask: str = "random"  # where a masked bias puts its -inf: MASK_SHAPES

    def bias_shape(self) -> tuple[int, ...]:
        full = (*self.lead, self.queries, self.keys)[self.bias_drop :]
        ones = self.bias_ones + (False,) * len(full)
        return tuple(1 if one else size for size, one in zip(full, ones))

    def tensors(self):
        dtype = DTYPES[self.dtype]
        q = seeded((*self.lead, self.queries, self.dim), self.seed, dtype, self.scale)
        k = seeded((*self.lead, self.keys, self.dim), self.seed + 1, dtype, self.scale)
        v = seeded((*self.lead, self.keys, self.value_dim), self.seed + 2, dtype, self.value_scale)
        if self.bias == BiasKind.NONE:
            return q, k, v, None
        shape = self.bias_shape()
        bias = seeded(shape, self.seed + 3, dtype, 2.0)
        if self.bias == BiasKind.MASKED and shape[-1] > 1:
            bias = bias.masked_fill(self._masked(shape), float("-inf"))
        return q, k, v, bias

    def _masked(self, shape: tuple[int, ...]) -> torch.Tensor:
        """Where the bias is -inf: at random, a prefix of the keys (left padding, each row its own), or the keys
        after each query (causal, the queries the last of the keys); one visible key per row at least."""
        gen = generator(self.seed + 4)
        keys = torch.arange(shape[-1])
        if self.mask == "left padding":
            starts = torch.randint(0, shape[-1], (*shape[:-2], 1, 1), generator=gen)
            starts.view(-1)[0] = shape[-1] - 1  # the first row all padding but its last key: a one-token prompt
            mask = (keys < starts).expand(shape).clone()
        elif self.mask == "causal":
            queries = torch.arange(shape[-2])[:, None]
            mask = (keys > queries + (shape[-1] - shape[-2])).expand(shape).clone()
        else:
            mask = torch.rand(shape, generator=gen) < 0.35
        keep = torch.randint(0, shape[-1], (*shape[:-1], 1), generator=gen)
        if self.mask == "random":
            return mask.scatter_(-1, keep, False)
        hidden = mask.all(-1, keepdim=True)  # a causal query before the first key: it sees one at random
        return mask.scatter_(-1, keep, mask.gather(-1, keep) & ~hidden)

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of each tensor argument (``layouts.laid_cases``): k and
        v shared by the heads they serve (multi-query attention), q or a bias over the batch; never the query
        and key axes of a bias (copying one row's -inf could mask whole rows)."""
        leading = tuple(range(len(self.lead)))
        specs = [
            ("q", (*self.lead, self.queries, self.dim), leading),
            ("k", (*self.lead, self.keys, self.dim), leading),
            ("v", (*self.lead, self.keys, self.value_dim), leading),
        ]
        if self.bias != BiasKind.NONE:
            shape = self.bias_shape()
            specs.append(("bias", shape, tuple(range(len(shape) - 2))))
        return specs

    def describe(self) -> str:
        lead = list(self.lead)
        text = (
            f"q {shape_text(lead + [self.queries, self.dim])}, k {shape_text(lead + [self.keys, self.dim])}, "
            f"v {shape_text(lead + [self.keys, self.value_dim])}, {self.dtype}, entries of q and k about "
            f"{self.scale:g}"
        )
        if self.bias == BiasKind.NONE:
            return text
        masked = f" ({self.mask})" if self.bias == BiasKind.MASKED else ""
        return text + f", a {self.bias} bias{masked} {shape_text(self.bias_shape())}"


MAX_ENTRIES = 1 << 13  # of q, k or v in one case: a quick call across the sandbox
MASK_SHAPES = ("random", "left padding", "causal")
EDGE_LOGITS = 512  # of a mask edge: a few rows of many keys show a mask's shape; more only cost time  # the masks models pass, and scattered -inf


@st.composite
def attention_cases(draw, bias: tuple[BiasKind, ...] = (BiasKind.NONE,)) -> AttentionCase:
    lead = draw(LEADING)
    bias_kind = draw(st.sampled_from(bias))
    drop = draw(st.integers(0, len(lead)))
    ones = tuple(draw(st.lists(st.booleans(), min_size=len(lead) - drop + 2, max_size=len(lead) - drop + 2)))
    # A bias shows what it does only where it varies over two keys or more: its key axis is never broadcast.
    biased = bias_kind != BiasKind.NONE
    ones = ones[:-1] + (False,) if biased else ones
    queries, keys = draw(sizes(1, 40)), draw(sizes(2 if biased else 1, 40))
    widest = max(1, min(64, MAX_ENTRIES // (torch.Size(lead).numel() * max(queries, keys))))
    return AttentionCase(
        lead,
        queries,
        keys,
        draw(sizes(2 if biased else 1, max(2, widest))),
        draw(sizes(1, min(16, widest))),
        draw(st.sampled_from(["float32", "float64"])),
        draw(st.sampled_from([1.0, 1e-3, 0.1, 10.0, 30.0])),
        draw(MAGNITUDES),
        bias_kind,
        drop,
        ones,
        draw(SEEDS),
        draw(st.sampled_from(MASK_SHAPES)) if bias_kind == BiasKind.MASKED else "random",
    )


@dataclass(frozen=True)
class TokensCase:
    """Self-attention input x [..., T, D] and a permutation of its tokens (one per leading row)."""

    lead: tuple[int, ...]
    tokens: int
    dim: int
    dtype: str
    scale: float
    seed: int

    def x(self) -> torch.Tensor:
        return seeded((*self.lead, self.tokens, self.dim), self.seed, DTYPES[self.dtype], self.scale)

    def orders(self) -> torch.Tensor:
        """[..., T] index: a random order of the tokens for each leading row, moving at least one."""
        gen = generator(self.seed + 1)
        rows = torch.Size(self.lead).numel()
        orders = torch.stack([torch.randperm(self.tokens, generator=gen) for _ in range(rows)])
        orders[0] = orders[0].roll(1) if torch.equal(orders[0], torch.arange(self.tokens)) else orders[0]
        return orders.reshape(*self.lead, self.tokens)

    def describe(self) -> str:
        return f"x {shape_text([*self.lead, self.tokens, self.dim])}, {self.dtype}, entries about {self.scale:g}"


@st.composite
def token_cases(draw, max_tokens: int = 40) -> TokensCase:
    lead, tokens = draw(LEADING), draw(sizes(2, max_tokens))
    widest = max(1, min(64, MAX_ENTRIES // (torch.Size(lead).numel() * tokens)))
    return TokensCase(
        lead,
        tokens,
        draw(sizes(1, widest)),
        draw(st.sampled_from(["float32", "float64"])),
        draw(st.sampled_from([1.0, 1e-3, 0.1, 10.0])),
        draw(SEEDS),
    )


def structured_mask_edges() -> st.SearchStrategy:
    """for_each's edges: a left-padded and a causal bias, each over two or more queries and eight or more keys, in
    every run (scattered -inf seldom masks a long run of keys, and a bias broadcast over the queries is never
    causal)."""

    def shaped(mask: str) -> st.SearchStrategy:
        return attention_cases(bias=(BiasKind.MASKED,)).filter(
            lambda case: (
                case.mask == mask
                and case.keys >= 8
                and case.bias_shape()[-2] >= 2
                and math.prod(case.lead) * case.queries * case.keys <= EDGE_LOGITS
            )
        )

    return st.tuples(shaped("left padding"), shaped("causal"))
