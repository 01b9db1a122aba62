"""Equivariance and invariance, checked: attn(PX) against P·attn(X), with positions, a mask or pooling.

For a permutation matrix P with ``P[i, order[i]] = 1``, plain self-attention is
permutation-EQUIVARIANT, ``attn(P X) = P attn(X)``; mean-pooling its output over tokens makes it
permutation-INVARIANT. Adding a positional encoding, or a causal mask, breaks both.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import torch

from poslab.encodings import sinusoidal_encoding
from poslab.permutation import permutation_matrix
from poslab.viz.common import axis_title, heatmap
from poslab.viz.permutation.model import TOLERANCE, embed, self_attention
from poslab.viz.permutation.orders import validate_order


def _rows(matrix: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


@dataclass(frozen=True)
class EquivarianceResult:
    tokens: tuple[str, ...]
    order: tuple[int, ...]
    positional: bool
    causal: bool
    pooled: bool
    permuted_output: tuple[tuple[float, ...], ...]  # attn(PX), or its mean over tokens (1 row)
    expected_output: tuple[tuple[float, ...], ...]  # P attn(X), or mean of attn(X) (1 row)
    max_difference: float
    output_scale: float  # max |entry| of expected_output, to read max_difference against
    tolerance: float = TOLERANCE

    @property
    def permuted_tokens(self) -> tuple[str, ...]:
        return tuple(self.tokens[i] for i in self.order)

    @property
    def holds(self) -> bool:
        return self.max_difference <= self.tolerance

    @property
    def is_identity(self) -> bool:
        return self.order == tuple(range(len(self.order)))

    @property
    def claim(self) -> str:
        return "mean(attn(PX)) = mean(attn(X))" if self.pooled else "attn(PX) = P·attn(X)"

    @property
    def property_name(self) -> str:
        return "invariant" if self.pooled else "equivariant"

    @property
    def relative_difference(self) -> float:
        return self.max_difference / self.output_scale if self.output_scale else 0.0

    @property
    def verdict(self) -> str:
        numbers = f"largest difference {self.max_difference:.2g}, tolerance {self.tolerance:g}"
        if self.holds:
            return f"{self.claim} holds: permutation-{self.property_name} ({numbers})."
        return (
            f"{self.claim} breaks: not permutation-{self.property_name} ({numbers}, "
            f"{self.relative_difference:.0%} of the largest output entry)."
        )

    @property
    def explanation_key(self) -> str:
        """Which text block of the lesson explains this outcome."""
        if self.is_identity:
            return "why-identity"
        if self.holds:
            return "why-invariant" if self.pooled else "why-equivariant"
        if self.positional and self.causal:
            return "why-positional-and-causal"
        return "why-positional" if self.positional else "why-causal"


def equivariance_experiment(
    tokens: tuple[str, ...],
    order: tuple[int, ...],
    *,
    d_model: int = 16,
    seed: int = 0,
    positional: bool = False,
    causal: bool = False,
    pooled: bool = False,
) -> EquivarianceResult:
    """Run attention on X and on PX (adding positions/mask/pooling as asked) and compare."""
    validate_order(order, len(tokens))
    x = embed(tokens, d_model, seed)  # (T, D)
    p = permutation_matrix(order)  # (T, T); 0/1 entries, so P @ M moves rows exactly
    permuted_x = p @ x
    if positional:  # positions belong to slots, not to words: slot i gets PE[i] either way
        table = sinusoidal_encoding(len(tokens), d_model)
        x, permuted_x = x + table, permuted_x + table
    permuted_output = self_attention(permuted_x, seed, causal)  # attn(PX)
    expected = p @ self_attention(x, seed, causal)  # P attn(X)
    if pooled:
        permuted_output, expected = permuted_output.mean(0, keepdim=True), expected.mean(0, keepdim=True)
    return EquivarianceResult(
        tokens=tuple(tokens),
        order=tuple(order),
        positional=positional,
        causal=causal,
        pooled=pooled,
        permuted_output=_rows(permuted_output),
        expected_output=_rows(expected),
        max_difference=float((permuted_output - expected).abs().max()),
        output_scale=float(expected.abs().max()),
    )


def comparison_charts(result: EquivarianceResult) -> tuple[alt.Chart, alt.Chart, alt.Chart]:
    """attn(PX), P·attn(X) (one shared colour range) and their difference, as heatmaps."""
    permuted = torch.tensor(result.permuted_output)
    expected = torch.tensor(result.expected_output)
    rows = ["mean over tokens"] if result.pooled else list(result.permuted_tokens)
    limit = float(max(permuted.abs().max(), expected.abs().max()))
    common = dict(x_title=axis_title("feature", "index"), y_title="slot: token", row_labels=rows, value_format=".4f")
    left_title, right_title = ("mean(attn(PX))", "mean(attn(X))") if result.pooled else ("attn(PX)", "P·attn(X)")
    verdict = "equal up to rounding" if result.holds else "different"
    return (
        heatmap(permuted, title=left_title, value_title="output value", domain=(-limit, limit), **common),
        heatmap(expected, title=right_title, value_title="output value", domain=(-limit, limit), **common),
        heatmap(
            permuted - expected,
            title="difference (left − middle)",
            value_title="difference",
            **{**common, "value_format": ".1e"},
            description=(
                f"Heatmap of {left_title} minus {right_title}, one row per slot and one column per "
                f"feature: the largest difference is {result.max_difference:.1e} in size, so the two "
                f"are {verdict}."
            ),
        ),
    )
